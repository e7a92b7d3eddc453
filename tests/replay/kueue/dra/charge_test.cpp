// DRA charging as Kueue computes it. Each case names
// the upstream function (kubernetes-sigs/kueue pkg/dra, pkg/workload) whose
// rule it pins, and goes through the whole pipeline: events -> ledger ->
// replay -> `computed` / `errors` / findings.
#include "tests/kueue_objects.h"
#include "tests/test_support.h"

using namespace ledger;
using namespace ledger::testing;
using namespace ledger::testing::k8s;

namespace {

const std::string kGpuSelector =
    "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'";
const std::string kMigSelector =
    "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'";

Json gpuDevice(const std::string& name, const std::string& model = "a100") {
  return device(name, {{"type", {{"string", "gpu"}}}, {"model", {{"string", model}}}});
}

// A cluster with one queue, a 2-GPU pool and the given mapping.
std::string chargeCluster(const Json& mappings,
                          const std::string& quotaResource = "nvidia.com/gpu") {
  return event("ADDED", kueueConfig(mappings)) +
         event("ADDED", deviceClass("gpu.nvidia.com", {kGpuSelector})) +
         event("ADDED",
               resourceSlice("node-1-gpus", "gpu.nvidia.com", "node-1", 1, 1,
                             Json::array({gpuDevice("gpu-0"), gpuDevice("gpu-1", "h100")}))) +
         event("ADDED", resourceFlavor("default")) +
         event("ADDED",
               clusterQueue(
                   "cq", "v1beta2", "",
                   {{"default", {{"cpu", 100}, {"memory", "100Gi"}, {quotaResource, 100}}}})) +
         event("ADDED", localQueue("ns", "lq", "cq"));
}

Json gpuMapping(const std::vector<std::string>& classes = {"gpu.nvidia.com"},
                const std::string& name = "nvidia.com/gpu") {
  return {{"name", name}, {"deviceClassNames", classes}};
}

// A workload whose pod set uses `template` through a resourceClaims entry.
Json rctWorkload(const std::string& name, const std::string& tmpl, int count = 1) {
  Json spec = {
      {"containers",
       Json::array({container("c", {{"cpu", "1"}}, Json::array({{{"name", "gpu"}}}))})},
      {"resourceClaims", Json::array({{{"name", "gpu"}, {"resourceClaimTemplateName", tmpl}}})}};
  return workload("ns", name, "lq", Json::array({podSet("main", count, spec)}));
}

struct ChargeOutcome {
  std::string gpu;  // computed for the resource, or "<absent>"
  std::vector<std::string> errors;
  replay::StateReport report;
};

ChargeOutcome chargeFor(const std::string& stream, const std::string& resource = "nvidia.com/gpu",
                        const std::string& wl = "w") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  auto out = ingestText(*ledger, stream);
  REQUIRE(out.rejected == 0);
  ChargeOutcome o;
  o.report = reportOf(*ledger);
  const auto* w = findWorkload(o.report, "ns", wl);
  REQUIRE(w != nullptr);
  o.gpu = q(w->computed, resource);
  o.errors = w->errors;
  return o;
}

}  // namespace

// ------------------------------------------------ ResourceClaimTemplate path

TEST_CASE(
    "claims.go GetResourceRequestsForResourceClaimTemplates: one device per request by default",
    "[dra][rct]") {
  auto o = chargeFor(
      chargeCluster(Json::array({gpuMapping()})) +
      event("ADDED",
            claimTemplate("ns", "one", Json::array({exactRequest("gpu", "gpu.nvidia.com")}))) +
      event("ADDED", rctWorkload("w", "one", 3)));
  CHECK(o.gpu == "3");  // count 1 (API default) x pod set count 3
  CHECK(o.errors.empty());
}

TEST_CASE(
    "claims.go countDevicesPerClass: exactly.count, summed over requests; template charged once "
    "per pod",
    "[dra][rct]") {
  Json reqs = Json::array(
      {exactRequest("a", "gpu.nvidia.com", {{"count", 2}}), exactRequest("b", "gpu.nvidia.com")});
  Json spec = {
      {"containers",
       Json::array({container("c1", {{"cpu", "1"}}, Json::array({{{"name", "gpu"}}})),
                    container("c2", {{"cpu", "1"}}, Json::array({{{"name", "gpu"}}}))})},
      {"resourceClaims", Json::array({{{"name", "gpu"}, {"resourceClaimTemplateName", "t"}}})}};
  auto o = chargeFor(
      chargeCluster(Json::array({gpuMapping()})) + event("ADDED", claimTemplate("ns", "t", reqs)) +
      event("ADDED", workload("ns", "w", "lq", Json::array({podSet("main", 1, spec)}))));
  CHECK(o.gpu == "3");  // two containers share the claim: 2 + 1, not doubled
}

TEST_CASE(
    "mapper.go PopulateFromConfiguration: several classes to one name; the first mapping of a "
    "class wins",
    "[dra][rct]") {
  Json mappings = Json::array({gpuMapping({"gpu.nvidia.com", "other.nvidia.com"}, "nvidia.com/gpu"),
                               gpuMapping({"gpu.nvidia.com"}, "shadow.example.com/gpu")});
  Json reqs =
      Json::array({exactRequest("a", "gpu.nvidia.com"), exactRequest("b", "other.nvidia.com")});
  auto o = chargeFor(chargeCluster(mappings) + event("ADDED", deviceClass("other.nvidia.com", {})) +
                     event("ADDED", claimTemplate("ns", "t", reqs)) +
                     event("ADDED", rctWorkload("w", "t")));
  CHECK(o.gpu == "2");
  const auto* w = findWorkload(o.report, "ns", "w");
  CHECK(q(w->computed, "shadow.example.com/gpu") == "<absent>");
}

TEST_CASE("claims.go countDevicesPerClass: AdminAccess requests charge nothing", "[dra][rct]") {
  Json reqs = Json::array({exactRequest("a", "gpu.nvidia.com", {{"adminAccess", true}}),
                           exactRequest("b", "gpu.nvidia.com", {{"count", 2}})});
  auto o = chargeFor(chargeCluster(Json::array({gpuMapping()})) +
                     event("ADDED", claimTemplate("ns", "t", reqs)) +
                     event("ADDED", rctWorkload("w", "t")));
  CHECK(o.gpu == "2");
}

TEST_CASE(
    "claims.go countDevicesPerClass: FirstAvailable and AllocationMode All are inadmissible, in "
    "Kueue's words",
    "[dra][rct]") {
  SECTION("firstAvailable") {
    Json reqs =
        Json::array({{{"name", "gpu"},
                      {"firstAvailable",
                       Json::array({{{"name", "x"}, {"deviceClassName", "gpu.nvidia.com"}}})}}});
    auto o = chargeFor(chargeCluster(Json::array({gpuMapping()})) +
                       event("ADDED", claimTemplate("ns", "t", reqs)) +
                       event("ADDED", rctWorkload("w", "t")));
    CHECK(o.gpu == "<absent>");
    REQUIRE(o.errors.size() == 1);
    CHECK(
        o.errors[0] ==
        "spec.podSets[0].template.spec.resourceClaims[0].devices.requests[0]: Invalid value: null: "
        "ResourceClaimTemplate t: FirstAvailable device selection is not supported");
  }
  SECTION("allocationMode All") {
    Json reqs = Json::array({exactRequest("gpu", "gpu.nvidia.com", {{"allocationMode", "All"}})});
    auto o = chargeFor(chargeCluster(Json::array({gpuMapping()})) +
                       event("ADDED", claimTemplate("ns", "t", reqs)) +
                       event("ADDED", rctWorkload("w", "t")));
    REQUIRE(o.errors.size() == 1);
    CHECK(o.errors[0] ==
          "spec.podSets[0].template.spec.resourceClaims[0].devices.requests[0].exactly."
          "allocationMode: "
          "Invalid value: \"All\": ResourceClaimTemplate t: AllocationMode 'All' is not supported");
    // The pod set's other requests stay in `computed`.
    CHECK(q(findWorkload(o.report, "ns", "w")->computed, "cpu") == "1");
  }
}

TEST_CASE(
    "claims.go countDevicesPerClass: Exactly must be set; an exact request without a class is "
    "skipped",
    "[dra][rct]") {
  const std::string base = chargeCluster(Json::array({gpuMapping()}));
  SECTION("v1: neither exactly nor firstAvailable") {
    auto o = chargeFor(base +
                       event("ADDED", claimTemplate("ns", "t", Json::array({{{"name", "gpu"}}}))) +
                       event("ADDED", rctWorkload("w", "t")));
    REQUIRE(o.errors.size() == 1);
    CHECK(o.errors[0] ==
          "spec.podSets[0].template.spec.resourceClaims[0].devices.requests[0]: Invalid value: "
          "null: ResourceClaimTemplate t: Exactly must be set if FirstAvailable is nil");
  }
  SECTION("v1: exactly without deviceClassName is not charged (dc == \"\": continue)") {
    Json reqs = Json::array(
        {{{"name", "a"}, {"exactly", {{"count", 2}}}}, exactRequest("b", "gpu.nvidia.com")});
    auto o = chargeFor(base + event("ADDED", claimTemplate("ns", "t", reqs)) +
                       event("ADDED", rctWorkload("w", "t")));
    CHECK(o.errors.empty());
    CHECK(o.gpu == "1");
  }
  SECTION("v1beta1: the request's own fields are its exactly (API conversion)") {
    Json tmpl =
        claimTemplate("ns", "t",
                      Json::array({{{"name", "a"}, {"count", 2}},
                                   {{"name", "b"}, {"deviceClassName", "gpu.nvidia.com"}}}));
    tmpl["apiVersion"] = "resource.k8s.io/v1beta1";
    auto o = chargeFor(base + event("ADDED", tmpl) + event("ADDED", rctWorkload("w", "t")));
    CHECK(o.errors.empty());
    CHECK(o.gpu == "1");
  }
}

TEST_CASE("claims.go: an unmapped DeviceClass is NotFound and raises UnmappedDeviceClass",
          "[dra][rct]") {
  auto o = chargeFor(
      chargeCluster(Json::array({gpuMapping({"gpu.nvidia.com"})})) +
      event("ADDED", deviceClass("fpga.example.com", {})) +
      event("ADDED",
            claimTemplate("ns", "t", Json::array({exactRequest("f", "fpga.example.com")}))) +
      event("ADDED", rctWorkload("w", "t")));
  REQUIRE(o.errors.size() == 1);
  CHECK(o.errors[0] ==
        "spec.podSets[0].template.spec.resourceClaims[0].resourceClaimTemplateName: Not found: "
        "\"DeviceClass fpga.example.com is not mapped in DRA configuration for podset main\"");
  CHECK(hasFinding(o.report, "UnmappedDeviceClass", "Workload ns/w"));
}

TEST_CASE(
    "claims.go getClaimSpec: a missing template is an error; workload_controller handleDRA: direct "
    "claims are refused",
    "[dra][rct]") {
  SECTION("missing template") {
    auto o = chargeFor(chargeCluster(Json::array({gpuMapping()})) +
                       event("ADDED", rctWorkload("w", "nope")));
    REQUIRE(o.errors.size() == 1);
    CHECK(o.errors[0] ==
          "spec.podSets[0].template.spec.resourceClaims[0]: Internal error: failed to get claim "
          "spec for "
          "ResourceClaimTemplate nope in podset main: resourceclaimtemplates.resource.k8s.io "
          "\"nope\" not found");
    CHECK_FALSE(hasFinding(o.report, "UnmappedDeviceClass"));
  }
  SECTION("resourceClaimName") {
    Json spec = {
        {"containers", Json::array({container("c", {{"cpu", "1"}})})},
        {"resourceClaims", Json::array({{{"name", "gpu"}, {"resourceClaimName", "shared"}}})}};
    auto o = chargeFor(
        chargeCluster(Json::array({gpuMapping()})) +
        event("ADDED", workload("ns", "w", "lq", Json::array({podSet("main", 1, spec)}))));
    REQUIRE(o.errors.size() == 1);
    CHECK(o.errors[0] == "KueueDRAIntegration feature does not support use of resource claims");
  }
}

TEST_CASE(
    "claims.go validateCELSelectorsAgainstDevices: CEL requests must be satisfiable by published "
    "devices",
    "[dra][rct][cel]") {
  const std::string base = chargeCluster(Json::array({gpuMapping()}));
  SECTION("satisfiable: charged by count") {
    Json reqs = Json::array({exactRequest(
        "gpu", "gpu.nvidia.com",
        {{"selectors",
          Json::array(
              {{{"cel",
                 {{"expression", "device.attributes['gpu.nvidia.com'].model == 'h100'"}}}}})}})});
    auto o = chargeFor(base + event("ADDED", claimTemplate("ns", "t", reqs)) +
                       event("ADDED", rctWorkload("w", "t")));
    CHECK(o.gpu == "1");
    CHECK(o.errors.empty());
  }
  SECTION("insufficient matching devices") {
    Json reqs = Json::array({exactRequest(
        "gpu", "gpu.nvidia.com",
        {{"count", 2},
         {"selectors",
          Json::array(
              {{{"cel",
                 {{"expression", "device.attributes['gpu.nvidia.com'].model == 'h100'"}}}}})}})});
    auto o = chargeFor(base + event("ADDED", claimTemplate("ns", "t", reqs)) +
                       event("ADDED", rctWorkload("w", "t")));
    REQUIRE(o.errors.size() == 1);
    CHECK(o.errors[0] ==
          "spec.podSets[0].template.spec.resourceClaims[0].devices.requests[0].exactly.selectors: "
          "Internal error: "
          "ResourceClaimTemplate t: insufficient matching devices for CEL selector in DeviceClass "
          "gpu.nvidia.com: 1 device(s) match in the cluster but 2 requested");
  }
  SECTION("multi-request CEL selectors do not double-count a device") {
    Json sel = Json::array(
        {{{"cel", {{"expression", "device.attributes['gpu.nvidia.com'].model == 'a100'"}}}}});
    Json reqs = Json::array({exactRequest("a", "gpu.nvidia.com", {{"selectors", sel}}),
                             exactRequest("b", "gpu.nvidia.com", {{"selectors", sel}})});
    auto o = chargeFor(base + event("ADDED", claimTemplate("ns", "t", reqs)) +
                       event("ADDED", rctWorkload("w", "t")));
    REQUIRE(o.errors.size() == 1);
    CHECK_THAT(o.errors[0],
               Catch::Contains("devices.requests[1].exactly.selectors") &&
                   Catch::Contains("0 device(s) match in the cluster but 1 requested"));
  }
  SECTION("invalid CEL is a compile error") {
    Json reqs = Json::array({exactRequest(
        "gpu", "gpu.nvidia.com",
        {{"selectors", Json::array({{{"cel", {{"expression", "this is not valid CEL!!!"}}}}})}})});
    auto o = chargeFor(base + event("ADDED", claimTemplate("ns", "t", reqs)) +
                       event("ADDED", rctWorkload("w", "t")));
    REQUIRE(o.errors.size() == 1);
    CHECK_THAT(
        o.errors[0],
        Catch::StartsWith("spec.podSets[0].template.spec.resourceClaims[0].devices.requests[0]."
                          "exactly.selectors: Invalid value: null: ResourceClaimTemplate t: ") &&
            Catch::Contains("CEL compilation failed: compilation failed: "));
  }
  SECTION("compileCELSelectors: Kueue's context, then dracel's detail, each once") {
    // Kueue prefixes "CEL compilation failed" to CompilationResult.Error.Detail,
    // which k8s.io/dynamic-resource-allocation/cel starts "compilation failed: ".
    Json reqs = Json::array(
        {exactRequest("gpu", "gpu.nvidia.com",
                      {{"selectors", Json::array({{{"cel", {{"expression", "foo == 1"}}}}})}})});
    auto o = chargeFor(base + event("ADDED", claimTemplate("ns", "t", reqs)) +
                       event("ADDED", rctWorkload("w", "t")));
    REQUIRE(o.errors.size() == 1);
    CHECK(o.errors[0] ==
          "spec.podSets[0].template.spec.resourceClaims[0].devices.requests[0].exactly.selectors: "
          "Invalid value: null: ResourceClaimTemplate t: "
          "devices.requests[0].exactly.selectors[0].cel.expression: Invalid value: \"foo == 1\": "
          "CEL compilation failed: compilation failed: ERROR: <input>:1:1: undeclared reference "
          "to 'foo' (in container '')\n | foo == 1\n | ^");
  }
  SECTION("resolveAndCompileDeviceClass: an invalid DeviceClass selector, prefixed once") {
    Json reqs = Json::array({exactRequest(
        "gpu", "bad.example.com",
        {{"selectors", Json::array({{{"cel", {{"expression", "device.driver != ''"}}}}})}})});
    auto o = chargeFor(base + event("ADDED", deviceClass("bad.example.com", {"1"})) +
                       event("ADDED", claimTemplate("ns", "t", reqs)) +
                       event("ADDED", rctWorkload("w", "t")));
    REQUIRE(o.errors.size() == 1);
    CHECK(o.errors[0] ==
          "spec.podSets[0].template.spec.resourceClaims[0].devices.requests[0][0].cel.expression: "
          "Invalid value: \"1\": ResourceClaimTemplate t: DeviceClass bad.example.com has invalid "
          "CEL selector: must evaluate to bool or the unknown type, not int");
  }
  SECTION("DeviceMatches: an attribute without a value fails every evaluation on its device") {
    // k8s.io/dynamic-resource-allocation/cel getAttributeValue: "unsupported
    // attribute value", before the expression runs; not an empty string.
    Json valueless = device("gpu-2", {{"type", {{"string", "gpu"}}}, {"model", Json::object()}});
    Json reqs = Json::array({exactRequest(
        "gpu", "gpu.nvidia.com",
        {{"selectors",
          Json::array(
              {{{"cel",
                 {{"expression", "device.attributes['gpu.nvidia.com'].model != 'h100'"}}}}})}})});
    auto o = chargeFor(base +
                       event("MODIFIED", resourceSlice("node-1-gpus", "gpu.nvidia.com", "node-1", 1,
                                                       1, Json::array({valueless}), nullptr, "2")) +
                       event("ADDED", claimTemplate("ns", "t", reqs)) +
                       event("ADDED", rctWorkload("w", "t")));
    CHECK(o.gpu == "<absent>");
    REQUIRE(o.errors.size() == 1);
    CHECK(o.errors[0] ==
          "spec.podSets[0].template.spec.resourceClaims[0].devices.requests[0].exactly.selectors: "
          "Invalid value: null: ResourceClaimTemplate t: CEL evaluation failed for DeviceClass "
          "gpu.nvidia.com: attribute model: unsupported attribute value");
  }
  SECTION("a missing key is an evaluation error, not false") {
    Json reqs = Json::array({exactRequest(
        "gpu", "gpu.nvidia.com",
        {{"selectors",
          Json::array(
              {{{"cel",
                 {{"expression", "device.attributes['gpu.nvidia.com'].nosuch == 'x'"}}}}})}})});
    auto o = chargeFor(base + event("ADDED", claimTemplate("ns", "t", reqs)) +
                       event("ADDED", rctWorkload("w", "t")));
    REQUIRE(o.errors.size() == 1);
    CHECK_THAT(o.errors[0],
               Catch::Contains("CEL evaluation failed for DeviceClass gpu.nvidia.com"));
  }
}

TEST_CASE("the mapping in force is the one in the log at that moment", "[dra][config]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  ingestText(
      *ledger,
      chargeCluster(Json::array()) +
          event("ADDED",
                claimTemplate("ns", "t", Json::array({exactRequest("gpu", "gpu.nvidia.com")}))) +
          event("ADDED", rctWorkload("w", "t")));
  const std::uint64_t before = ledger->lastSeq();
  ingestText(*ledger, event("MODIFIED", kueueConfig(Json::array({gpuMapping()}), "2")));
  auto early = reportOf(*ledger, before);
  CHECK(q(findWorkload(early, "ns", "w")->computed, "nvidia.com/gpu") == "<absent>");
  CHECK(hasFinding(early, "UnmappedDeviceClass"));
  auto now = reportOf(*ledger);
  CHECK(q(findWorkload(now, "ns", "w")->computed, "nvidia.com/gpu") == "1");
  CHECK_FALSE(hasFinding(now, "UnmappedDeviceClass"));
}

TEST_CASE("the configuration may come from a Kueue Configuration inside a ConfigMap",
          "[dra][config]") {
  Json cm = {{"apiVersion", "v1"},
             {"kind", "ConfigMap"},
             {"metadata", metadata("kueue-system", "kueue-manager-config", "1")},
             {"data",
              {{"controller_manager_config.yaml",
                "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nresources:\n"
                "  deviceClassMappings:\n  - name: nvidia.com/gpu\n    deviceClassNames: "
                "[gpu.nvidia.com]\n"}}}};
  auto o = chargeFor(
      chargeCluster(Json::array()) + event("ADDED", cm) +
      event("ADDED",
            claimTemplate("ns", "t", Json::array({exactRequest("gpu", "gpu.nvidia.com")}))) +
      event("ADDED", rctWorkload("w", "t")));
  CHECK(o.gpu == "1");
}

TEST_CASE(
    "Kueue issue 13842: a template recreated after admission is ChargeDrift, never a mismatch",
    "[dra][audit]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  Json t1 = claimTemplate("ns", "t", Json::array({exactRequest("gpu", "gpu.nvidia.com")}));
  Json wl = rctWorkload("w", "t");
  ingestText(*ledger,
             chargeCluster(Json::array({gpuMapping()})) + event("ADDED", t1) + event("ADDED", wl) +
                 event("MODIFIED",
                       admitted(wl, "cq", "default", {{"cpu", "1"}, {"nvidia.com/gpu", "1"}})));
  const std::uint64_t admittedAt = ledger->lastSeq();
  ingestText(*ledger, event("DELETED", with(t1, "metadata", metadata("ns", "t", "9"))));
  const std::uint64_t deletedAt = ledger->lastSeq();
  Json t2 = claimTemplate(
      "ns", "t", Json::array({exactRequest("gpu", "gpu.nvidia.com", {{"count", 2}})}), "10");
  t2["metadata"]["uid"] = "uid-recreated";
  ingestText(*ledger, event("ADDED", t2));

  auto atAdmission = reportOf(*ledger, admittedAt);
  CHECK(q(findWorkload(atAdmission, "ns", "w")->computed, "nvidia.com/gpu") == "1");
  CHECK_FALSE(hasFinding(atAdmission, "ChargeMismatch"));

  // Kueue fixed the charge at reservation: `computed` stays 1 throughout;
  // what today's template would charge is `current`, and ChargeDrift.
  auto whileMissing = reportOf(*ledger, deletedAt);
  const auto* missing = findWorkload(whileMissing, "ns", "w");
  CHECK(q(missing->computed, "nvidia.com/gpu") == "1");
  CHECK(missing->errors.empty());
  REQUIRE(missing->hasCurrent);
  CHECK_FALSE(missing->currentErrors.empty());
  CHECK_FALSE(hasFinding(whileMissing, "ChargeMismatch"));
  CHECK(hasFinding(whileMissing, "ChargeDrift", "Workload ns/w"));

  auto after = reportOf(*ledger);
  const auto* now = findWorkload(after, "ns", "w");
  CHECK(q(now->computed, "nvidia.com/gpu") == "1");
  REQUIRE(now->hasCurrent);
  CHECK(q(now->currentComputed, "nvidia.com/gpu") == "2");
  CHECK_FALSE(hasFinding(after, "ChargeMismatch"));
  CHECK(hasFinding(after, "ChargeDrift", "Workload ns/w"));
}

// --------------------------------------------------- extended resources path

namespace {

Json erWorkload(const Json& containers, const Json& initContainers = nullptr) {
  Json spec = {{"containers", containers}};
  if (!initContainers.is_null()) spec["initContainers"] = initContainers;
  return workload("ns", "w", "lq", Json::array({podSet("main", 2, spec)}));
}

std::string erCluster(const Json& mappings, const std::string& quotaResource = "nvidia.com/gpu") {
  return event("ADDED", kueueConfig(mappings)) +
         event("ADDED", deviceClass("gpu.nvidia.com", {kGpuSelector}, "nvidia.com/gpu")) +
         event("ADDED", resourceFlavor("default")) +
         event("ADDED", clusterQueue("cq", "v1beta2", "",
                                     {{"default", {{"cpu", 100}, {quotaResource, 100}}}})) +
         event("ADDED", localQueue("ns", "lq", "cq"));
}

}  // namespace

TEST_CASE(
    "extended_resources.go ResolveExtendedResourceQuota: a DRA-backed extended resource is charged "
    "per pod",
    "[dra][er]") {
  auto o = chargeFor(
      erCluster(Json::array()) +
      event("ADDED",
            erWorkload(Json::array({container("c", {{"cpu", "1"}, {"nvidia.com/gpu", "1"}})}))));
  CHECK(o.gpu == "2");
  CHECK(o.errors.empty());
}

TEST_CASE("extended_resources.go resolveQuotaKey: a mapped class charges the mapped name instead",
          "[dra][er]") {
  auto o = chargeFor(
      erCluster(Json::array({gpuMapping({"gpu.nvidia.com"}, "gpus")}), "gpus") +
          event("ADDED", erWorkload(Json::array({container("c", {{"nvidia.com/gpu", "1"}})}))),
      "gpus");
  CHECK(o.gpu == "2");
  CHECK(q(findWorkload(o.report, "ns", "w")->computed, "nvidia.com/gpu") == "<absent>");
}

TEST_CASE(
    "extended_resources.go selectedDeviceClass: newest creationTimestamp wins, ties to the first "
    "name",
    "[dra][er]") {
  Json mappings =
      Json::array({gpuMapping({"alpha"}, "alpha-claims"), gpuMapping({"omega"}, "omega-claims"),
                   gpuMapping({"beta"}, "beta-claims")});
  std::string base =
      event("ADDED", kueueConfig(mappings)) + event("ADDED", resourceFlavor("default")) +
      event("ADDED", clusterQueue("cq", "v1beta2", "", {{"default", {{"cpu", 10}}}})) +
      event("ADDED", localQueue("ns", "lq", "cq"));
  SECTION("later beats smaller name") {
    auto o = chargeFor(
        base + event("ADDED", deviceClass("alpha", {}, "example.com/gpu", "2026-11-01T00:00:00Z")) +
            event("ADDED", deviceClass("omega", {}, "example.com/gpu", "2026-11-01T00:05:00Z")) +
            event("ADDED", erWorkload(Json::array({container("c", {{"example.com/gpu", "1"}})}))),
        "omega-claims");
    CHECK(o.gpu == "2");
  }
  SECTION("a tie goes to the lexicographically first name") {
    auto o = chargeFor(
        base + event("ADDED", deviceClass("omega", {}, "example.com/gpu", "2026-11-01T00:05:00Z")) +
            event("ADDED", deviceClass("beta", {}, "example.com/gpu", "2026-11-01T00:05:00Z")) +
            event("ADDED", erWorkload(Json::array({container("c", {{"example.com/gpu", "1"}})}))),
        "beta-claims");
    CHECK(o.gpu == "2");
  }
}

TEST_CASE(
    "extended_resources.go: max over init containers vs sum over containers, per original name",
    "[dra][er]") {
  auto o = chargeFor(
      erCluster(Json::array()) +
      event("ADDED", erWorkload(Json::array({container("a", {{"nvidia.com/gpu", "1"}}),
                                             container("b", {{"nvidia.com/gpu", "2"}})}),
                                Json::array({container("i1", {{"nvidia.com/gpu", "5"}}),
                                             container("i2", {{"nvidia.com/gpu", "3"}})}))));
  CHECK(o.gpu == "10");  // max(5, 1+2) = 5 per pod, x2
}

TEST_CASE("extended_resources.go: quantities must be whole numbers", "[dra][er]") {
  auto o = chargeFor(
      erCluster(Json::array()) +
      event("ADDED", erWorkload(Json::array({container("c", {{"nvidia.com/gpu", "1500m"}})}))));
  REQUIRE(o.errors.size() == 1);
  CHECK(o.errors[0] ==
        "spec.podSets[0].template.spec.containers[0].resources.requests.nvidia.com/gpu: Invalid "
        "value: "
        "\"1500m\": extended resource quantity must be an integer");
  CHECK(o.gpu == "<absent>");
}

TEST_CASE("extended_resources.go: a counter-configured class is an error on this path",
          "[dra][er]") {
  Json mapping = {{"name", "gpu.memory"},
                  {"deviceClassNames", {"gpu.nvidia.com"}},
                  {"sources", Json::array({counterSource("memory", "gpu.nvidia.com")})}};
  auto o = chargeFor(
      erCluster(Json::array({mapping}), "gpu.memory") +
      event("ADDED", erWorkload(Json::array({container("c", {{"nvidia.com/gpu", "1"}})}))));
  REQUIRE(o.errors.size() == 1);
  CHECK(o.errors[0] ==
        "spec.podSets[0].template.spec.containers[0]: Invalid value: \"nvidia.com/gpu\": extended "
        "resource "
        "nvidia.com/gpu resolves to DeviceClass gpu.nvidia.com with counters configured; use "
        "ResourceClaimTemplates with CEL selectors for counter-based quota");
}

TEST_CASE("extended_resources.go: a resource no DeviceClass backs is a plain request",
          "[dra][er]") {
  auto o = chargeFor(
      erCluster(Json::array()) +
          event("ADDED", erWorkload(Json::array({container("c", {{"example.com/fpga", "500m"}})}))),
      "example.com/fpga");
  CHECK(o.gpu == "1");  // 500m x 2, no integer rule off the DRA path
  CHECK(o.errors.empty());
}

// ---------------------------------------------------------------- counters

namespace {

Json migDevice(const std::string& name, const std::string& set, const std::string& profile,
               const std::string& memory) {
  return device(
      name, {{"type", {{"string", "mig"}}}, {"profile", {{"string", profile}}}},
      Json::array({{{"counterSet", set}, {"counters", {{"memory", {{"value", memory}}}}}}}));
}

Json wholeGpu(const std::string& name, const std::string& set) {
  return device(
      name, {{"type", {{"string", "gpu"}}}},
      Json::array({{{"counterSet", set}, {"counters", {{"memory", {{"value", "40320Mi"}}}}}}}));
}

std::string migCluster(int generation = 1, int sliceCount = 2, bool withDevices = true) {
  Json mapping = {{"name", "gpu.memory"},
                  {"deviceClassNames", {"gpu.nvidia.com", "mig.nvidia.com"}},
                  {"sources", Json::array({counterSource("memory", "gpu.nvidia.com",
                                                         "device.driver == 'gpu.nvidia.com'")})}};
  Json counters =
      Json::array({{{"name", "gpu-0-cs"}, {"counters", {{"memory", {{"value", "40320Mi"}}}}}}});
  std::string s = event("ADDED", kueueConfig(Json::array({mapping}))) +
                  event("ADDED", deviceClass("gpu.nvidia.com", {kGpuSelector})) +
                  event("ADDED", deviceClass("mig.nvidia.com", {kMigSelector})) +
                  event("ADDED", resourceSlice("node-1-counters", "gpu.nvidia.com", "node-1",
                                               generation, sliceCount, nullptr, counters));
  if (withDevices) {
    s +=
        event("ADDED",
              resourceSlice(
                  "node-1-devices", "gpu.nvidia.com", "node-1", generation, sliceCount,
                  Json::array({wholeGpu("gpu-0", "gpu-0-cs"),
                               migDevice("gpu-0-mig-1g5gb-0", "gpu-0-cs", "1g.5gb", "4864Mi"),
                               migDevice("gpu-0-mig-2g10gb-0", "gpu-0-cs", "2g.10gb", "9856Mi")})));
  }
  return s + event("ADDED", resourceFlavor("default")) +
         event("ADDED", clusterQueue("cq", "v1beta2", "",
                                     {{"default", {{"cpu", 100}, {"gpu.memory", "800Gi"}}}})) +
         event("ADDED", localQueue("ns", "lq", "cq"));
}

std::string migTemplate(const std::string& profile, int count = 1) {
  Json extra = {{"count", count}};
  if (!profile.empty()) {
    extra["selectors"] = Json::array(
        {{{"cel",
           {{"expression", "device.attributes['gpu.nvidia.com'].profile == '" + profile + "'"}}}}});
  }
  return event(
      "ADDED",
      claimTemplate("ns", "t",
                    Json::array({exactRequest(
                        "gpu", profile.empty() ? "gpu.nvidia.com" : "mig.nvidia.com", extra)})));
}

}  // namespace

TEST_CASE("counters.go GetCounterResourcesForWorkload: the seed's numbers", "[dra][counter]") {
  SECTION("1g.5gb -> 4864Mi") {
    auto o = chargeFor(migCluster() + migTemplate("1g.5gb") + event("ADDED", rctWorkload("w", "t")),
                       "gpu.memory");
    CHECK(Quantity::parse(o.gpu) == Quantity::parse("5100273664"));
    CHECK(q(findWorkload(o.report, "ns", "w")->computed, "mig.nvidia.com") == "<absent>");
  }
  SECTION("whole A100-40GB -> 40320Mi") {
    auto o = chargeFor(migCluster() + migTemplate("") + event("ADDED", rctWorkload("w", "t")),
                       "gpu.memory");
    CHECK(Quantity::parse(o.gpu) == Quantity::parse("40320Mi"));
  }
  SECTION("count 2 and pod set count 3 multiply") {
    auto o = chargeFor(migCluster() + migTemplate("", 1) + event("ADDED", rctWorkload("w", "t", 3)),
                       "gpu.memory");
    CHECK(Quantity::parse(o.gpu) == Quantity::parse("120960Mi"));
  }
}

TEST_CASE("counters.go processCounterCharge: fewer matching devices than count is an error",
          "[dra][counter]") {
  auto o =
      chargeFor(migCluster() + migTemplate("1g.5gb", 2) + event("ADDED", rctWorkload("w", "t")),
                "gpu.memory");
  CHECK(o.gpu == "<absent>");
  REQUIRE(o.errors.size() == 1);
  CHECK_THAT(o.errors[0],
             Catch::Contains(
                 "insufficient matching devices for CEL selector in DeviceClass mig.nvidia.com") ||
                 Catch::Contains("insufficient matching devices for counter driver: 1 device(s) "
                                 "match but 2 requested"));
}

TEST_CASE(
    "counters.go matchDevicesWithSelectors: a device attribute without a value is an evaluation "
    "error",
    "[dra][counter]") {
  // DeviceMatches fails on the device before any selector runs (getAttributeValue:
  // "unsupported attribute value"); Kueue reports the first failing stage.
  Json gpu = wholeGpu("gpu-0", "gpu-0-cs");
  gpu["attributes"]["uuid"] = Json::object();
  auto o =
      chargeFor(migCluster() +
                    event("MODIFIED", resourceSlice("node-1-devices", "gpu.nvidia.com", "node-1", 1,
                                                    2, Json::array({gpu}), nullptr, "2")) +
                    migTemplate("") + event("ADDED", rctWorkload("w", "t")),
                "gpu.memory");
  CHECK(o.gpu == "<absent>");
  REQUIRE(o.errors.size() == 1);
  CHECK(o.errors[0] ==
        "spec.podSets[0].template.spec.resourceClaims[0].devices.requests[0]: Internal error: CEL "
        "evaluation error in deviceSelector for device gpu-0: attribute uuid: unsupported "
        "attribute value");
}

TEST_CASE("counters.go groupSlicesByPool: incomplete pools are not matched", "[dra][counter]") {
  // Only the counters slice of a 2-slice pool: no devices to match.
  auto o = chargeFor(migCluster(1, 2, /*withDevices=*/false) + migTemplate("") +
                         event("ADDED", rctWorkload("w", "t")),
                     "gpu.memory");
  REQUIRE(o.errors.size() == 1);
  CHECK_THAT(
      o.errors[0],
      Catch::Contains(
          "insufficient matching devices for counter driver: 0 device(s) match but 1 requested"));
}

TEST_CASE(
    "counters.go computeCounterCharges: no consumesCounters entry for the counter is an error",
    "[dra][counter]") {
  Json mapping = {{"name", "gpu.memory"},
                  {"deviceClassNames", {"gpu.nvidia.com"}},
                  {"sources", Json::array({counterSource("multiprocessors", "gpu.nvidia.com")})}};
  std::string stream = migCluster();
  stream += event("MODIFIED", kueueConfig(Json::array({mapping}), "5"));
  auto o =
      chargeFor(stream + migTemplate("") + event("ADDED", rctWorkload("w", "t")), "gpu.memory");
  REQUIRE(o.errors.size() == 1);
  CHECK_THAT(o.errors[0],
             Catch::EndsWith(
                 "matched devices have no consumesCounters entry for counter \"multiprocessors\""));
}

// ---------------------------------------------------------------- capacity

TEST_CASE(
    "capacity.go computeCapacityCharge: explicit, default or full capacity, rounded by the request "
    "policy",
    "[dra][capacity]") {
  Json mapping = {
      {"name", "gpu.memory"},
      {"deviceClassNames", {"shared.nvidia.com"}},
      {"sources",
       Json::array({{{"type", "Capacity"},
                     {"capacity", {{"name", "memory"}, {"driver", "gpu.nvidia.com"}}}}})}};
  Json policy = {{"default", "10Gi"},
                 {"validRange", {{"min", "1Gi"}, {"max", "80Gi"}, {"step", "1Gi"}}}};
  Json dev = device("gpu-0", {{"type", {{"string", "gpu"}}}}, nullptr,
                    {{"memory", {{"value", "80Gi"}, {"requestPolicy", policy}}}});
  dev["allowMultipleAllocations"] = true;
  std::string base =
      event("ADDED", kueueConfig(Json::array({mapping}))) +
      event("ADDED", deviceClass("shared.nvidia.com", {})) +
      event("ADDED", resourceSlice("s", "gpu.nvidia.com", "node-1", 1, 1, Json::array({dev}))) +
      event("ADDED", resourceFlavor("default")) +
      event("ADDED", clusterQueue("cq", "v1beta2", "",
                                  {{"default", {{"cpu", 10}, {"gpu.memory", "800Gi"}}}})) +
      event("ADDED", localQueue("ns", "lq", "cq"));
  SECTION("explicit request rounded up to the step") {
    Json req = exactRequest("gpu", "shared.nvidia.com",
                            {{"capacity", {{"requests", {{"memory", "15500Mi"}}}}}});
    auto o = chargeFor(base + event("ADDED", claimTemplate("ns", "t", Json::array({req}))) +
                           event("ADDED", rctWorkload("w", "t")),
                       "gpu.memory");
    CHECK(Quantity::parse(o.gpu) == Quantity::parse("16Gi"));
  }
  SECTION("no request: the policy default") {
    auto o = chargeFor(
        base +
            event("ADDED", claimTemplate("ns", "t",
                                         Json::array({exactRequest("gpu", "shared.nvidia.com")}))) +
            event("ADDED", rctWorkload("w", "t")),
        "gpu.memory");
    CHECK(Quantity::parse(o.gpu) == Quantity::parse("10Gi"));
  }
  SECTION("beyond the range max: no device's policy can satisfy it") {
    Json req = exactRequest("gpu", "shared.nvidia.com",
                            {{"capacity", {{"requests", {{"memory", "81Gi"}}}}}});
    auto o = chargeFor(base + event("ADDED", claimTemplate("ns", "t", Json::array({req}))) +
                           event("ADDED", rctWorkload("w", "t")),
                       "gpu.memory");
    REQUIRE(o.errors.size() == 1);
    CHECK_THAT(o.errors[0], Catch::Contains("capacity request cannot be satisfied by any matched "
                                            "device's RequestPolicy for dimension \"memory\""));
  }
}

TEST_CASE("one report: workloads with the same or different selectors each get their own charge",
          "[dra][counter]") {
  // The device-match cache answers each (driver, selectors, path) question
  // once per report; different selectors must not share an answer.
  Json twoG = {{"count", 1},
               {"selectors", Json::array({{{"cel",
                                            {{"expression",
                                              "device.attributes['gpu.nvidia.com'].profile == "
                                              "'2g.10gb'"}}}}})}};
  auto o = chargeFor(
      migCluster() + migTemplate("1g.5gb") +
          event("ADDED",
                claimTemplate("ns", "t2",
                              Json::array({exactRequest("gpu", "mig.nvidia.com", twoG)}))) +
          event("ADDED", rctWorkload("w", "t")) + event("ADDED", rctWorkload("w1", "t")) +
          event("ADDED", rctWorkload("w2", "t2")) + event("ADDED", rctWorkload("w3", "t", 2)),
      "gpu.memory");
  CHECK(Quantity::parse(q(findWorkload(o.report, "ns", "w")->computed, "gpu.memory")) ==
        Quantity::parse("4864Mi"));
  CHECK(Quantity::parse(q(findWorkload(o.report, "ns", "w1")->computed, "gpu.memory")) ==
        Quantity::parse("4864Mi"));
  CHECK(Quantity::parse(q(findWorkload(o.report, "ns", "w2")->computed, "gpu.memory")) ==
        Quantity::parse("9856Mi"));
  CHECK(Quantity::parse(q(findWorkload(o.report, "ns", "w3")->computed, "gpu.memory")) ==
        Quantity::parse("9728Mi"));
}
