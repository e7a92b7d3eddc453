# The typed projection of one recorded object: exactly what replay needs, so
# replay never parses JSON. Derived from LogRecord.objectJson by
# ingest/projector; `ledger-replay rebuild-projection` regenerates it.
#
# Conventions: quantities stay Kubernetes quantity strings (parsed at replay,
# so a malformed one becomes a finding, not a failed ingest); an empty Text
# means "not set"; times are ns since the Unix epoch, 0 when absent.
@0xa2130500820db59c;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("ledger::schema");

using Log = import "log.capnp";

struct KeyValue {
  key @0 :Text;
  value @1 :Text;
}

struct OwnerReference {
  apiVersion @0 :Text;
  kind @1 :Text;
  name @2 :Text;
  uid @3 :Text;
  controller @4 :Bool;
}

struct Condition {
  type @0 :Text;
  status @1 :Text;
  reason @2 :Text;
  message @3 :Text;
  lastTransitionNs @4 :Int64;
}

# ---------------------------------------------------------------- core/v1 pods

struct Container {
  name @0 :Text;
  requests @1 :List(KeyValue);
  limits @2 :List(KeyValue);
  claims @3 :List(Text);          # resources.claims[].name
  restartPolicy @4 :Text;         # "Always" on an init container = sidecar
}

struct PodResourceClaim {
  name @0 :Text;
  resourceClaimTemplateName @1 :Text;
  resourceClaimName @2 :Text;
}

struct Toleration {
  key @0 :Text;
  operator @1 :Text;
  value @2 :Text;
  effect @3 :Text;
}

struct NodeSelectorRequirement {
  key @0 :Text;
  operator @1 :Text;
  values @2 :List(Text);
}

struct NodeSelectorTerm {
  matchExpressions @0 :List(NodeSelectorRequirement);
}

struct PodSpec {
  containers @0 :List(Container);
  initContainers @1 :List(Container);
  overhead @2 :List(KeyValue);
  resourceClaims @3 :List(PodResourceClaim);
  nodeSelector @4 :List(KeyValue);
  tolerations @5 :List(Toleration);
  # requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms (ORed)
  requiredNodeAffinity @6 :List(NodeSelectorTerm);
  priorityClassName @7 :Text;
}

struct PodClaimStatus {
  name @0 :Text;
  resourceClaimName @1 :Text;
}

struct Pod {
  nodeName @0 :Text;
  phase @1 :Text;
  resourceClaimStatuses @2 :List(PodClaimStatus);
  spec @3 :PodSpec;
  # metadata.labels["control-plane"] is "controller-manager", as on Kueue's
  # own controller Pods, whose restarts decide when a configuration change
  # takes effect (replay/charge_history.h).
  controllerManagerLabel @4 :Bool;
}

struct Namespace {
  labels @0 :List(KeyValue);
}

# ------------------------------------------------------------------ Kueue APIs

struct PodSet {
  name @0 :Text;
  count @1 :Int32;
  template @2 :PodSpec;
}

struct FlavorAssignment {
  resource @0 :Text;
  flavor @1 :Text;
}

struct PodSetAssignment {
  name @0 :Text;
  flavors @1 :List(FlavorAssignment);
  resourceUsage @2 :List(KeyValue);
  count @3 :Int32;
}

struct Workload {
  queueName @0 :Text;
  podSets @1 :List(PodSet);
  priority @2 :Int32;
  hasPriority @3 :Bool;
  conditions @4 :List(Condition);
  hasAdmission @5 :Bool;
  admissionClusterQueue @6 :Text;
  podSetAssignments @7 :List(PodSetAssignment);
  active @8 :Bool = true;
  # status.reclaimablePods: pods of a pod set that have finished and whose
  # quota Kueue gives back (pkg/workload podSetsCountsAfterReclaim).
  reclaimablePods @9 :List(ReclaimablePod);
  # The QuotaReserved condition, read once at ingest: the fold notes every
  # workload's reservation (replay/charge_history.h) and reading the
  # conditions' texts there cost a replay more than the rest of a Workload
  # record. `unknown` in projections written before the field.
  quotaReservation @10 :QuotaReservation;

  struct ReclaimablePod {
    name @0 :Text;
    count @1 :Int32;
  }
  enum QuotaReservation {
    unknown @0;
    notReserved @1;
    reserved @2;
  }
}

struct ResourceQuota {
  name @0 :Text;
  nominalQuota @1 :Text;
  borrowingLimit @2 :Text;       # empty = unlimited
  lendingLimit @3 :Text;         # empty = unlimited
}

struct FlavorQuotas {
  name @0 :Text;
  resources @1 :List(ResourceQuota);
}

struct ResourceGroup {
  coveredResources @0 :List(Text);
  flavors @1 :List(FlavorQuotas);
}

struct FlavorUsage {
  name @0 :Text;
  resources @1 :List(KeyValue);
}

struct ClusterQueue {
  cohort @0 :Text;               # spec.cohortName (v1beta2) or spec.cohort (v1beta1)
  resourceGroups @1 :List(ResourceGroup);
  whenCanBorrow @2 :Text;        # flavorFungibility, normalised to v1beta2 spellings
  whenCanPreempt @3 :Text;
  hasStatus @4 :Bool;
  flavorsReservation @5 :List(FlavorUsage);
  flavorsUsage @6 :List(FlavorUsage);
  reclaimWithinCohort @7 :Text;
  withinClusterQueue @8 :Text;
  stopPolicy @9 :Text;
}

struct Cohort {
  parent @0 :Text;               # spec.parentName (v1beta1) / spec.parentName (v1beta2)
  resourceGroups @1 :List(ResourceGroup);
}

struct LocalQueue {
  clusterQueue @0 :Text;
}

struct Taint {
  key @0 :Text;
  value @1 :Text;
  effect @2 :Text;
}

struct ResourceFlavor {
  nodeLabels @0 :List(KeyValue);
  nodeTaints @1 :List(Taint);
  tolerations @2 :List(Toleration);
}

# --------------------------------------------------------- resource.k8s.io DRA

struct DeviceClass {
  selectors @0 :List(Text);      # CEL expressions
  extendedResourceName @1 :Text;
}

struct CapacityRequest {
  name @0 :Text;
  value @1 :Text;
}

struct DeviceRequest {
  name @0 :Text;
  # What the request asks for: `exactly` (v1; the whole request in v1beta1) or
  # a `firstAvailable` list of alternatives (charging those is unsupported).
  firstAvailable @1 :Bool;
  deviceClassName @2 :Text;
  allocationMode @3 :Text;       # "" = ExactCount (API default)
  count @4 :Int64;               # 0 = not set (API default 1)
  adminAccess @5 :Bool;
  selectors @6 :List(Text);      # CEL expressions
  capacityRequests @7 :List(CapacityRequest);
  # A v1/v1beta2 request with no `exactly` (Kueue: "Exactly must be set if
  # FirstAvailable is nil"). v1beta1 keeps the fields on the request, which
  # the API converts to `exactly`, so those never set it. Ledgers written
  # before this field read false: such a request is then an exact request
  # of no class, which Kueue does not charge.
  exactlyUnset @8 :Bool;
}

struct ResourceClaimTemplate {
  requests @0 :List(DeviceRequest);
}

struct DeviceResult {
  request @0 :Text;
  driver @1 :Text;
  pool @2 :Text;
  device @3 :Text;
  consumedCapacity @4 :List(KeyValue);
  adminAccess @5 :Bool;
}

struct ClaimConsumer {
  resource @0 :Text;
  name @1 :Text;
  uid @2 :Text;
}

struct ResourceClaim {
  requests @0 :List(DeviceRequest);
  allocated @1 :Bool;
  results @2 :List(DeviceResult);
  reservedFor @3 :List(ClaimConsumer);
}

struct DeviceAttribute {
  name @0 :Text;                 # as published: qualified "domain/id" or bare id
  value :union {
    bool @1 :Bool;
    int @2 :Int64;
    string @3 :Text;
    version @4 :Text;
    # None of the above was set. API validation requires one, but a stored
    # slice may lack it; DRA's CEL then fails every evaluation on the device
    # (dynamic-resource-allocation/cel getAttributeValue). Ledgers written
    # before this member hold such an attribute as string "".
    none @5 :Void;
  }
}

struct CapacityRequestPolicy {
  default @0 :Text;
  validValues @1 :List(Text);
  hasValidRange @2 :Bool;
  rangeMin @3 :Text;
  rangeMax @4 :Text;
  rangeStep @5 :Text;
}

struct DeviceCapacity {
  name @0 :Text;
  value @1 :Text;
  hasRequestPolicy @2 :Bool;
  requestPolicy @3 :CapacityRequestPolicy;
}

struct CounterConsumption {
  counterSet @0 :Text;
  counters @1 :List(KeyValue);
}

struct Device {
  name @0 :Text;
  attributes @1 :List(DeviceAttribute);
  capacity @2 :List(DeviceCapacity);
  consumesCounters @3 :List(CounterConsumption);
  allowMultipleAllocations @4 :Bool;
}

struct CounterSet {
  name @0 :Text;
  counters @1 :List(KeyValue);
}

struct ResourceSlice {
  driver @0 :Text;
  pool @1 :Text;
  poolGeneration @2 :Int64;
  resourceSliceCount @3 :Int64;
  nodeName @4 :Text;
  devices @5 :List(Device);
  sharedCounters @6 :List(CounterSet);
}

# -------------------------------------------------- the DRA quota configuration

struct DeviceClassSource {
  union {
    counter @0 :CounterSource;
    capacity @1 :CapacitySource;
  }
  struct CounterSource {
    name @0 :Text;
    driver @1 :Text;
    deviceSelector @2 :Text;     # CEL expression, empty = every device
  }
  struct CapacitySource {
    name @0 :Text;
    driver @1 :Text;
    deviceSelector @2 :Text;
  }
}

struct DeviceClassMapping {
  name @0 :Text;
  deviceClassNames @1 :List(Text);
  sources @2 :List(DeviceClassSource);
}

# From the Kueue CR (`kueue.openshift.io/v1` Kueue `cluster`), a Kueue
# Configuration, or a ConfigMap holding controller_manager_config.yaml.
struct DraConfig {
  mappings @0 :List(DeviceClassMapping);
  # Not a configuration source Kueue reads: a ConfigMap other than the one
  # named by --kueue-config, or a Kueue CR not named `cluster`. Stored so
  # the audit can name it (IgnoredConfig); it never changes the mapping.
  ignored @1 :Bool;
  # The namespace whose Kueue controller Pods read this configuration: the
  # ConfigMap's, a Configuration's `namespace` field (Kueue's default
  # kueue-system), openshift-kueue-operator for the Kueue CR (where the
  # operator runs Kueue); empty in projections written before the field
  # (any namespace).
  controllerNamespace @2 :Text;
}

# ------------------------------------------------------------------- envelope

struct Projection {
  creationNs @0 :Int64;
  ownerReferences @1 :List(OwnerReference);
  # Fields the projector could not read (wrong type, unparsable YAML in a
  # ConfigMap...): each becomes a finding on the object at replay.
  problems @2 :List(Text);
  body :union {
    other @3 :Void;              # stored, not interpreted
    workload @4 :Workload;
    clusterQueue @5 :ClusterQueue;
    cohort @6 :Cohort;
    localQueue @7 :LocalQueue;
    resourceFlavor @8 :ResourceFlavor;
    namespace @9 :Namespace;
    pod @10 :Pod;
    deviceClass @11 :DeviceClass;
    resourceClaimTemplate @12 :ResourceClaimTemplate;
    resourceClaim @13 :ResourceClaim;
    resourceSlice @14 :ResourceSlice;
    draConfig @15 :DraConfig;
  }
}

# What the projection column family stores per seq: the record's header and
# its projected object, so a replay reads nothing else.
struct ProjectedRecord {
  type @0 :Log.EventType;
  timeNs @1 :Int64;
  identity @2 :Log.ObjectIdentity;
  object @3 :Projection;
}
