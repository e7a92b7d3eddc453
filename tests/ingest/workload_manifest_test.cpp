// Workload manifests (ingest/workload_manifest.h): every document
// of the file is read, exactly one Workload or Job is the subject, and the
// ResourceClaimTemplates and DeviceClasses beside it count for the DRA
// charge as if they existed in the cluster.
#include <fstream>

#include "ingest/workload_manifest.h"
#include "replay/admission/admission.h"
#include "tests/replay/admission/admission_fixture.h"
#include "tests/test_support.h"
#include "tools/admit_command.h"

using namespace ledger::testing::admission;
using ledger::cli::addManifestObjects;
using ledger::ingest::loadWorkloadManifest;
using ledger::ingest::WorkloadManifest;
using ledger::testing::TempDir;

namespace {

// Kueue's site/static/examples/dra/sample-dra-rct-job.yaml, in substance: a
// ResourceClaimTemplate asking for one device of class gpu.example.com, then
// a Job (named by generateName) whose pod claims it.
const char* kSampleRctJob = R"(apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  namespace: default
  name: single-gpu
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.example.com
---
apiVersion: batch/v1
kind: Job
metadata:
  generateName: sample-dra-rct-job-
  namespace: default
  labels:
    kueue.x-k8s.io/queue-name: user-queue
spec:
  template:
    spec:
      containers:
      - name: dummy-job
        image: registry.k8s.io/e2e-test-images/agnhost:2.53
        args: ["pause"]
        resources:
          claims:
          - name: gpu
          requests:
            cpu: "1"
            memory: "200Mi"
      resourceClaims:
      - name: gpu
        resourceClaimTemplateName: single-gpu
      restartPolicy: Never
)";

std::string writeFile(const TempDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.path(name);
  std::ofstream(path) << text;
  return path;
}

// Kueue's sample-dra-queues.yaml and the deviceClassMappings of its DRA
// setup guide (example.com/gpu <- DeviceClass gpu.example.com).
void sampleCluster(Fixture& f) {
  f.add(resourceFlavorWith("default-flavor"));
  f.add(clusterQueueWith(
      "cluster-queue",
      {group({flavorQuotas("default-flavor", {quota("cpu", "40"), quota("memory", "200Gi"),
                                              quota("example.com/gpu", "8")})})}));
  f.add(Json{{"apiVersion", "kueue.x-k8s.io/v1beta2"},
             {"kind", "LocalQueue"},
             {"metadata", {{"name", "user-queue"}, {"namespace", "default"}, {"uid", "uid-lq"}}},
             {"spec", {{"clusterQueue", "cluster-queue"}}}});
  f.add(Json{{"apiVersion", "config.kueue.x-k8s.io/v1beta2"},
             {"kind", "Configuration"},
             {"resources",
              {{"deviceClassMappings",
                {{{"name", "example.com/gpu"}, {"deviceClassNames", {"gpu.example.com"}}}}}}}});
  f.add(Json{{"apiVersion", "resource.k8s.io/v1"},
             {"kind", "DeviceClass"},
             {"metadata", {{"name", "gpu.example.com"}, {"uid", "uid-dc"}}},
             {"spec", Json::object()}});
}

AdmissionReport admit(ClusterState& state, const WorkloadManifest& m) {
  const StoredObject workload(0, m.workloadRecord.asPtr());
  AdmissionSubject s{m.ns, m.name, workload.projection().getBody().getWorkload(),
                     state.timeNs() + 1, false};
  return evaluateAdmission(state, s);
}

}  // namespace

TEST_CASE("workload manifest: Kueue's RCT sample reads both documents", "[admission][manifest]") {
  TempDir dir;
  const WorkloadManifest m = loadWorkloadManifest(writeFile(dir, "job.yaml", kSampleRctJob));
  REQUIRE(m.workloadRecord != nullptr);
  CHECK(m.ns == "default");
  CHECK(m.name == "job-sample-dra-rct-job");
  REQUIRE(m.clusterObjects.size() == 1);
  CHECK(m.clusterObjects[0]["metadata"]["name"] == "single-gpu");
  CHECK(m.ignored.empty());
}

TEST_CASE("workload manifest: the file's ResourceClaimTemplate is charged as if it existed",
          "[admission][manifest]") {
  TempDir dir;
  const WorkloadManifest m = loadWorkloadManifest(writeFile(dir, "job.yaml", kSampleRctJob));
  Fixture f;
  sampleCluster(f);
  const std::uint64_t seq = f.state.seq();
  const std::int64_t time = f.state.timeNs();

  SECTION("without the file's template the ledger has none: Kueue's not-found error") {
    const AdmissionReport r = admit(f.state, m);
    REQUIRE(r.inadmissible.has_value());
    CHECK_THAT(*r.inadmissible, Catch::Contains("single-gpu") && Catch::Contains("not found"));
  }
  SECTION("with it: one example.com/gpu, and the moment is unchanged") {
    const auto notes = addManifestObjects(f.state, m.clusterObjects);
    REQUIRE(notes.size() == 1);
    CHECK_THAT(notes[0], Catch::Contains("ResourceClaimTemplate default/single-gpu") &&
                             Catch::Contains("taken as existing"));
    CHECK(f.state.seq() == seq);
    CHECK(f.state.timeNs() == time);
    const AdmissionReport r = admit(f.state, m);
    CHECK_FALSE(r.inadmissible.has_value());
    CHECK(r.fits);
    REQUIRE(r.podSets.size() == 1);
    CHECK(r.podSets[0].requests.at("example.com/gpu") == "1");
    CHECK(r.podSets[0].requests.at("cpu") == "1");
  }
  SECTION("it replaces a same-named template of the ledger") {
    Json twoGpus = m.clusterObjects[0];
    twoGpus["metadata"]["uid"] = "uid-rct";
    twoGpus["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] = 2;
    f.add(twoGpus);
    CHECK(admit(f.state, m).podSets.at(0).requests.at("example.com/gpu") == "2");
    const auto notes = addManifestObjects(f.state, m.clusterObjects);
    CHECK_THAT(notes.at(0), Catch::Contains("replaces the ledger's"));
    CHECK(admit(f.state, m).podSets.at(0).requests.at("example.com/gpu") == "1");
  }
}

TEST_CASE("workload manifest: exactly one Workload or Job, named in the errors",
          "[admission][manifest]") {
  TempDir dir;
  const std::string rct =
      std::string(kSampleRctJob).substr(0, std::string(kSampleRctJob).find("---"));
  const std::string none = writeFile(dir, "none.yaml", rct);
  CHECK_THROWS_WITH(loadWorkloadManifest(none),
                    Catch::Contains(none) && Catch::Contains("no kueue.x-k8s.io Workload"));
  const std::string two = writeFile(
      dir, "two.yaml",
      std::string(kSampleRctJob) + "---\n" + std::string(kSampleRctJob).substr(rct.size() + 4));
  CHECK_THROWS_WITH(loadWorkloadManifest(two),
                    Catch::Contains(two) && Catch::Contains("2 Workloads or Jobs") &&
                        Catch::Contains("line 14") && Catch::Contains("line 39"));
  // Other kinds are read past and listed.
  const std::string withConfigMap =
      writeFile(dir, "cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: default}\n---\n" +
                    std::string(kSampleRctJob));
  const WorkloadManifest m = loadWorkloadManifest(withConfigMap);
  CHECK(m.name == "job-sample-dra-rct-job");
  CHECK(m.ignored == std::vector<std::string>{"ConfigMap default/c"});
}
