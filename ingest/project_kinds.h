// Per-kind projectors behind projectObject (internal to ingest/).
// Each fills its union member of schema::Projection; none throws for bad
// input (problems go to the FieldReader).
#pragma once

#include "ingest/json_fields.h"

namespace ledger::ingest {

void projectConditions(FieldReader& fr, JsonPtr conds, capnp::List<schema::Condition>::Builder out);
void projectWorkload(FieldReader& fr, const Json& obj, schema::Workload::Builder out);
void projectClusterQueue(FieldReader& fr, const Json& obj, schema::ClusterQueue::Builder out);
void projectCohort(FieldReader& fr, const Json& obj, schema::Cohort::Builder out);
void projectLocalQueue(FieldReader& fr, const Json& obj, schema::LocalQueue::Builder out);
void projectResourceFlavor(FieldReader& fr, const Json& obj, schema::ResourceFlavor::Builder out);

void projectDeviceClass(FieldReader& fr, const Json& obj, schema::DeviceClass::Builder out);
void projectResourceClaimTemplate(FieldReader& fr, const Json& obj,
                                  schema::ResourceClaimTemplate::Builder out);
void projectResourceClaim(FieldReader& fr, const Json& obj, schema::ResourceClaim::Builder out);
void projectResourceSlice(FieldReader& fr, const Json& obj, schema::ResourceSlice::Builder out);

// The deviceClassMappings list of a Kueue Configuration / Kueue CR.
void projectMappings(FieldReader& fr, JsonPtr mappings, schema::DraConfig::Builder out);

}  // namespace ledger::ingest
