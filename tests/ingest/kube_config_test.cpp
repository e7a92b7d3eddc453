// The daemon's pure pieces: kubeconfig and in-cluster configuration, the
// resource list, backoff bounds, the writer's live-key scoping, and the
// Prometheus exposition.
#include <cstdlib>
#include <fstream>

#include "ingest/kube/backoff.h"
#include "ingest/kube/kube_config.h"
#include "ingest/kube/ledger_writer.h"
#include "ingest/kube/metrics.h"
#include "ingest/kube/resource_list.h"
#include "tests/test_support.h"

using namespace ledger;
using namespace ledger::kube;
using namespace ledger::testing;

namespace {

void write(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

const char* kKubeconfig = R"(apiVersion: v1
kind: Config
current-context: prod
clusters:
- name: prod-cluster
  cluster:
    server: https://api.prod.example:6443
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==
- name: lab-cluster
  cluster:
    server: https://10.0.0.1:6443
    insecure-skip-tls-verify: true
contexts:
- name: prod
  context: {cluster: prod-cluster, user: auditor}
- name: lab
  context: {cluster: lab-cluster, user: lab-admin}
users:
- name: auditor
  user:
    token: abc.def
- name: lab-admin
  user:
    client-certificate: certs/admin.crt
    client-key-data: a2V5
)";

}  // namespace

TEST_CASE("kubeconfig: current context, token, CA data; TLS checks stay on", "[watch][config]") {
  TempDir dir;
  write(dir.path("config"), kKubeconfig);
  const ClusterConfig c = kubeconfigConfig(dir.path("config"));
  CHECK(c.server == "https://api.prod.example:6443");
  CHECK(c.token == "abc.def");
  CHECK(c.caData == "-----BEGIN CERTIFICATE-----\n");
  CHECK_FALSE(c.insecureSkipTlsVerify);
  CHECK(c.certFile.empty());
}

TEST_CASE("kubeconfig: a named context, client certificate, insecure only when set",
          "[watch][config]") {
  TempDir dir;
  write(dir.path("config"), kKubeconfig);
  std::filesystem::create_directories(dir.path("certs"));
  write(dir.path("certs/admin.crt"), "-----BEGIN CERTIFICATE-----\n");
  const ClusterConfig c = kubeconfigConfig(dir.path("config"), "lab");
  CHECK(c.server == "https://10.0.0.1:6443");
  CHECK(c.insecureSkipTlsVerify);
  CHECK(c.certFile == dir.path("certs/admin.crt"));  // relative to the kubeconfig
  CHECK(c.keyData == "key");
  CHECK_THROWS_AS(kubeconfigConfig(dir.path("config"), "nope"), ConfigError);
}

TEST_CASE("kubeconfig: a CA or client certificate file that cannot be read is refused, named",
          "[watch][config]") {
  TempDir dir;
  write(dir.path("config"), kKubeconfig);
  // certs/admin.crt does not exist: every request would fail.
  CHECK_THROWS_WITH(kubeconfigConfig(dir.path("config"), "lab"),
                    Catch::Contains("client-certificate") && Catch::Contains("admin.crt"));
  write(dir.path("ca-config"),
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: k, cluster: {server: 'https://h:6443', "
        "certificate-authority: missing-ca.crt}}]\n"
        "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
        "users: [{name: u, user: {token: t}}]\n");
  CHECK_THROWS_WITH(kubeconfigConfig(dir.path("ca-config")),
                    Catch::Contains("certificate-authority") && Catch::Contains("missing-ca.crt"));
}

TEST_CASE("kubeconfig: a list merges, the first file to set a value wins", "[watch][config]") {
  TempDir dir;
  write(dir.path("a"), "current-context: lab\n");
  write(dir.path("b"), kKubeconfig);
  std::filesystem::create_directories(dir.path("certs"));
  write(dir.path("certs/admin.crt"), "-----BEGIN CERTIFICATE-----\n");
  const ClusterConfig c =
      kubeconfigConfig(dir.path("a") + ":" + dir.path("missing") + ":" + dir.path("b"));
  CHECK(c.server == "https://10.0.0.1:6443");
  write(dir.path("exec"), R"(current-context: x
clusters: [{name: c, cluster: {server: "https://x"}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
users: [{name: u, user: {exec: {command: gke-gcloud-auth-plugin}}}]
)");
  CHECK_THROWS_AS(kubeconfigConfig(dir.path("exec")), ConfigError);
  CHECK_THROWS_AS(kubeconfigConfig(dir.path("missing")), ConfigError);
}

TEST_CASE("kubeconfig: a key given twice is invalid YAML, not the last one winning",
          "[watch][config]") {
  TempDir dir;
  // Two `server:` lines in one cluster: yaml-cpp alone would answer the first.
  std::string twice = kKubeconfig;
  const std::string server = "    server: https://api.prod.example:6443\n";
  twice.insert(twice.find(server) + server.size(), "    server: https://evil.example:6443\n");
  write(dir.path("config"), twice);
  try {
    kubeconfigConfig(dir.path("config"));
    FAIL("a kubeconfig with a duplicate key was accepted");
  } catch (const ConfigError& e) {
    CHECK_THAT(e.what(), Catch::Contains("duplicate mapping key \"server\"") &&
                             Catch::Contains("line 8, column 5"));
  }
}

TEST_CASE("in-cluster: service host, token and CA files", "[watch][config]") {
  TempDir dir;
  const std::string sa = dir.path("sa");
  std::filesystem::create_directories(sa);
  write(sa + "/token", "sa-token\n");
  write(sa + "/ca.crt", "pem");
  ::setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
  ::setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  const ClusterConfig c = inClusterConfig(sa);
  CHECK(c.server == "https://[fd00::1]:443");
  CHECK(c.tokenFile == sa + "/token");
  CHECK(c.caFile == sa + "/ca.crt");
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  CHECK_THROWS_AS(inClusterConfig(sa), ConfigError);
  ::unsetenv("KUBERNETES_SERVICE_PORT");
}

TEST_CASE("--server: plain HTTP on loopback only", "[watch][config]") {
  CHECK(serverUrlConfig("http://127.0.0.1:8001/").server == "http://127.0.0.1:8001");
  CHECK(serverUrlConfig("http://localhost:8001").noProxy);
  CHECK(serverUrlConfig("http://[::1]:8001").server == "http://[::1]:8001");
  CHECK_THROWS_AS(serverUrlConfig("http://10.1.2.3:8080"), ConfigError);
  CHECK_THROWS_AS(serverUrlConfig("ftp://127.0.0.1"), ConfigError);
  CHECK(serverUrlConfig("https://api.example:6443").server == "https://api.example:6443");
  CHECK(decodeBase64("aGVsbG8gd29ybGQ=") == "hello world");
  CHECK_THROWS_AS(decodeBase64("a*b"), ConfigError);
  // A folded YAML scalar keeps its line breaks; binary bytes come back as is.
  CHECK(decodeBase64("aGVsbG8g\nd29ybGQ=\n") == "hello world");
  CHECK(decodeBase64("AP8Afw==") == std::string("\x00\xff\x00\x7f", 4));
  CHECK(decodeBase64("").empty());
}

TEST_CASE("resource list: the contract's default, kubectl-style names, ConfigMaps",
          "[watch][config]") {
  const auto d = defaultResources();
  REQUIRE(d.size() == 12);
  CHECK(d[3].id() == "kueue.x-k8s.io/workloads");
  CHECK(d[3].versions == std::vector<std::string>{"v1beta2", "v1beta1"});
  CHECK(d[3].kind == "Workload");
  CHECK(d[5].versions == std::vector<std::string>{"v1", "v1beta2", "v1beta1"});
  CHECK(d[9].id() == "core/pods");
  const auto r = parseResources("pods, jobs.batch@v1|v1beta1");
  REQUIRE(r.size() == 2);
  CHECK(r[1].group == "batch");
  CHECK(r[1].versions == std::vector<std::string>{"v1", "v1beta1"});
  CHECK(collectionPath(r[0], "v1") == "/api/v1/pods");
  CHECK(parseResources("default,pods").size() == 13);
  CHECK_THROWS_AS(parseResources("Pods"), std::invalid_argument);
  CHECK_THROWS_AS(parseResources(" , "), std::invalid_argument);
  const ResourceSpec cm = configMapResource("kueue-system/kueue-manager-config");
  CHECK(cm.id() == "core/configmaps/kueue-system/kueue-manager-config");
  CHECK(collectionPath(cm, "v1") == "/api/v1/namespaces/kueue-system/configmaps");
  CHECK(fieldSelectorQuery(cm) == "fieldSelector=metadata.name%3Dkueue-manager-config");
  CHECK_THROWS_AS(configMapResource("no-namespace"), std::invalid_argument);
}

TEST_CASE("backoff: doubles to the cap, jittered into the upper half", "[watch][config]") {
  Backoff b(std::chrono::milliseconds(100), std::chrono::milliseconds(1000), 7);
  for (int i = 0; i < 20; ++i) {
    const auto ceiling = b.current();
    const auto d = b.next();
    CHECK(d >= ceiling / 2);
    CHECK(d <= ceiling);
    CHECK(ceiling <= std::chrono::milliseconds(1000));
  }
  CHECK(b.current() == std::chrono::milliseconds(1000));
  b.reset();
  CHECK(b.current() == std::chrono::milliseconds(100));
}

TEST_CASE("a watch's scope over the ledger's live keys", "[watch][config]") {
  ResolvedResource all{"core/pods", "", "v1", "Pod", "", ""};
  CHECK(all.livePrefix() == "/Pod/");
  CHECK(all.covers("/Pod/team-a/p1"));
  CHECK_FALSE(all.covers("/PodTemplate/team-a/p1"));
  ResolvedResource one{"core/configmaps/ns/cfg", "", "v1", "ConfigMap", "ns", "cfg"};
  CHECK(one.covers("/ConfigMap/ns/cfg"));
  CHECK_FALSE(one.covers("/ConfigMap/ns/cfg2"));
  CHECK_FALSE(one.covers("/ConfigMap/other/cfg"));
  const auto ev = synthesizedDeletion(one, "/ConfigMap/ns/cfg", LiveObject{"u1", "5", std::nullopt},
                                      "9", "deleted-while-unwatched");
  CHECK(ev.object["apiVersion"] == "v1");
  CHECK(ev.object["metadata"]["namespace"] == "ns");
  CHECK(ev.object["metadata"]["uid"] == "u1");
  CHECK(ev.object["metadata"]["resourceVersion"] == "9");
}

TEST_CASE("metrics: exposition names, label escaping, readiness", "[watch][config]") {
  Metrics m;
  CHECK_FALSE(m.ready());  // nothing registered yet
  m.registerResource("a");
  m.registerResource("b");
  m.setState("a", ResourceState::kSynced);
  m.setState("b", ResourceState::kAbsent);
  CHECK(m.ready());
  m.recordsAppended("Work\"load", 3);
  const std::string text = m.render(0);
  CHECK(text.find("# TYPE ledger_records_appended_total counter") != std::string::npos);
  CHECK(text.find("ledger_records_appended_total{kind=\"Work\\\"load\"} 3") != std::string::npos);
  CHECK(text.find("ledger_resource_absent{resource=\"b\"} 1") != std::string::npos);
}
