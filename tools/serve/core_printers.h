// The cells Kubernetes' own table printer writes for the core kinds whose
// columns are computed, not read at one JSONPath (kubernetes/kubernetes
// pkg/printers/internalversion/printers.go): a Pod's READY, STATUS,
// RESTARTS and -o wide's IP, NODE, NOMINATED NODE, READINESS GATES
// (printPod), a ResourceClaim's STATE (resourceClaimState), and the
// ledger's two extra claim columns, ALLOCATED and RESERVED FOR.
//
// Each takes the object as the API serves it and the moment asked (the
// "now" of the "(5m ago)" a restart count carries). A field that is absent
// or of another type reads as Kubernetes reads a zero value. Functions
// only; thread-safe; never throw.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

namespace ledger::serve {

// "ready/total": ready containers (and started, ready restartable init
// containers) of the containers (and restartable init containers).
nlohmann::json podReadyCell(const nlohmann::json& pod, std::int64_t momentNs);
// The phase, or status.reason, SchedulingGated, "Init:..." while an init
// container runs or failed, a container's waiting or terminated reason,
// "Terminating" once deleted and not finished.
nlohmann::json podStatusCell(const nlohmann::json& pod, std::int64_t momentNs);
// The restart count, with "(5m ago)" since the last termination.
nlohmann::json podRestartsCell(const nlohmann::json& pod, std::int64_t momentNs);
nlohmann::json podIpCell(const nlohmann::json& pod, std::int64_t momentNs);
nlohmann::json podNodeCell(const nlohmann::json& pod, std::int64_t momentNs);
nlohmann::json podNominatedNodeCell(const nlohmann::json& pod, std::int64_t momentNs);
nlohmann::json podReadinessGatesCell(const nlohmann::json& pod, std::int64_t momentNs);

// "pending", "allocated", "allocated,reserved", with "deleted" first once
// the claim has a deletionTimestamp.
nlohmann::json claimStateCell(const nlohmann::json& claim, std::int64_t momentNs);
// The allocated devices as POOL/DEVICE, comma-separated; "<none>" when
// the claim is not allocated.
nlohmann::json claimAllocatedCell(const nlohmann::json& claim, std::int64_t momentNs);
// The consumers in status.reservedFor as RESOURCE/NAME ("pods/job-1-0"),
// comma-separated; "<none>" when there are none.
nlohmann::json claimReservedForCell(const nlohmann::json& claim, std::int64_t momentNs);

}  // namespace ledger::serve
