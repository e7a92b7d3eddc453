#include "ingest/kube/kube_config.h"

#include <openssl/evp.h>
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <new>
#include <sstream>
#include <vector>

#include "ingest/net/listen_address.h"
#include "ingest/yaml_json.h"

namespace ledger::kube {

namespace {

namespace fs = std::filesystem;

std::string readFile(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError("cannot read " + what + " " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string scalar(const YAML::Node& node, const char* key) {
  if (!node || !node.IsMap()) return {};
  const YAML::Node v = node[key];
  return v && v.IsScalar() ? v.as<std::string>() : std::string();
}

// One kubeconfig file's named entries.
struct KubeFile {
  std::string path;
  YAML::Node root;
};

// The first file (in order) that defines `name` in `section`, and its entry.
bool findNamed(const std::vector<KubeFile>& files, const char* section, const char* field,
               const std::string& name, YAML::Node* out, std::string* dir) {
  for (const auto& f : files) {
    const YAML::Node list = f.root[section];
    if (!list || !list.IsSequence()) continue;
    for (const auto& entry : list) {
      if (scalar(entry, "name") == name && entry[field]) {
        *out = entry[field];
        *dir = fs::path(f.path).parent_path().string();
        return true;
      }
    }
  }
  return false;
}

std::string resolvePath(const std::string& p, const std::string& dir) {
  if (p.empty() || fs::path(p).is_absolute() || dir.empty()) return p;
  return (fs::path(dir) / p).string();
}

std::vector<std::string> splitPaths(const std::string& paths) {
  std::vector<std::string> out;
  std::stringstream s(paths);
  std::string item;
  while (std::getline(s, item, ':')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

}  // namespace

// The *-data fields of a kubeconfig are []byte, which Go's encoding/json
// reads as standard base64 (RFC 4648 with padding), the way kubectl does.
// OpenSSL's decoder also skips the line breaks a folded YAML scalar keeps.
std::string decodeBase64(const std::string& text) {
  std::unique_ptr<EVP_ENCODE_CTX, decltype(&EVP_ENCODE_CTX_free)> ctx(EVP_ENCODE_CTX_new(),
                                                                      EVP_ENCODE_CTX_free);
  if (!ctx) throw std::bad_alloc();
  std::string out(text.size() / 4 * 3 + 3, '\0');
  auto* to = reinterpret_cast<unsigned char*>(out.data());
  int n = 0, total = 0;
  EVP_DecodeInit(ctx.get());
  if (EVP_DecodeUpdate(ctx.get(), to, &n, reinterpret_cast<const unsigned char*>(text.data()),
                       static_cast<int>(text.size())) < 0) {
    throw ConfigError("invalid base64 data");
  }
  total = n;
  if (EVP_DecodeFinal(ctx.get(), to + total, &n) < 0) throw ConfigError("invalid base64 data");
  out.resize(static_cast<std::size_t>(total + n));
  return out;
}

ClusterConfig inClusterConfig(const std::string& saDir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || *host == '\0' || port == nullptr || *port == '\0') {
    throw ConfigError("not running in a cluster: KUBERNETES_SERVICE_HOST/PORT are not set");
  }
  ClusterConfig c;
  std::string h = host;
  if (h.find(':') != std::string::npos) h = "[" + h + "]";  // IPv6
  c.server = "https://" + h + ":" + port;
  c.tokenFile = saDir + "/token";
  readFile(c.tokenFile, "service account token");  // fail early when absent
  c.caFile = saDir + "/ca.crt";
  if (!fs::exists(c.caFile)) throw ConfigError("no service account CA at " + c.caFile);
  c.source = "in-cluster service account";
  return c;
}

ClusterConfig kubeconfigConfig(const std::string& paths, const std::string& context) {
  std::vector<KubeFile> files;
  for (const std::string& p : splitPaths(paths)) {
    if (!fs::exists(p)) continue;  // as kubectl: missing entries of a list are skipped
    try {
      YAML::Node root = YAML::Load(readFile(p, "kubeconfig"));
      // A key given twice is invalid YAML (yaml_json.h); which of two
      // `server:` lines kubectl would use is not a question to guess at.
      ingest::checkUniqueKeys(root);
      files.push_back({p, std::move(root)});
    } catch (const YAML::Exception& e) {
      throw ConfigError("kubeconfig " + p + " is not valid YAML: " + e.what());
    }
  }
  if (files.empty()) throw ConfigError("no kubeconfig found at " + paths);
  std::string ctxName = context;
  for (const auto& f : files) {
    if (!ctxName.empty()) break;
    ctxName = scalar(f.root, "current-context");
  }
  if (ctxName.empty()) throw ConfigError("kubeconfig " + paths + " has no current-context");
  YAML::Node ctx, cluster, user;
  std::string ctxDir, clusterDir, userDir;
  if (!findNamed(files, "contexts", "context", ctxName, &ctx, &ctxDir)) {
    throw ConfigError("kubeconfig " + paths + ": no context named '" + ctxName + "'");
  }
  const std::string clusterName = scalar(ctx, "cluster");
  if (!findNamed(files, "clusters", "cluster", clusterName, &cluster, &clusterDir)) {
    throw ConfigError("kubeconfig " + paths + ": no cluster named '" + clusterName + "'");
  }
  const std::string userName = scalar(ctx, "user");
  const bool hasUser =
      !userName.empty() && findNamed(files, "users", "user", userName, &user, &userDir);

  ClusterConfig c;
  c.server = scalar(cluster, "server");
  if (c.server.empty()) throw ConfigError("kubeconfig cluster '" + clusterName + "' has no server");
  c.caFile = resolvePath(scalar(cluster, "certificate-authority"), clusterDir);
  if (auto d = scalar(cluster, "certificate-authority-data"); !d.empty())
    c.caData = decodeBase64(d);
  c.insecureSkipTlsVerify = scalar(cluster, "insecure-skip-tls-verify") == "true";
  c.proxyUrl = scalar(cluster, "proxy-url");
  if (hasUser) {
    if (user["exec"] || user["auth-provider"]) {
      throw ConfigError("kubeconfig user '" + userName +
                        "' uses an exec or auth-provider plugin, which ledger-ingest does not "
                        "support: use a token or client certificate");
    }
    c.token = scalar(user, "token");
    c.tokenFile = resolvePath(scalar(user, "tokenFile"), userDir);
    c.username = scalar(user, "username");
    c.password = scalar(user, "password");
    c.certFile = resolvePath(scalar(user, "client-certificate"), userDir);
    if (auto d = scalar(user, "client-certificate-data"); !d.empty()) c.certData = decodeBase64(d);
    c.keyFile = resolvePath(scalar(user, "client-key"), userDir);
    if (auto d = scalar(user, "client-key-data"); !d.empty()) c.keyData = decodeBase64(d);
  }
  // A file named here that cannot be read would fail every request, and the
  // daemon would retry for ever while reporting itself healthy: refuse it
  // now, naming it.
  for (const auto& [path, what] :
       {std::pair{c.caFile, "certificate-authority"}, std::pair{c.certFile, "client-certificate"},
        std::pair{c.keyFile, "client-key"}, std::pair{c.tokenFile, "tokenFile"}}) {
    if (!path.empty()) readFile(path, std::string("kubeconfig ") + what);
  }
  c.source = "kubeconfig " + paths + " context " + ctxName;
  return c;
}

ClusterConfig serverUrlConfig(const std::string& url) {
  ClusterConfig c;
  const auto scheme = url.find("://");
  if (scheme == std::string::npos) throw ConfigError("--server '" + url + "' is not a URL");
  const std::string proto = url.substr(0, scheme);
  const std::string rest = url.substr(scheme + 3);
  std::string host = rest.substr(0, rest.find('/'));
  if (host.empty()) throw ConfigError("--server '" + url + "' has no host");
  if (host.front() == '[') {
    host = host.substr(0, host.find(']') + 1);
  } else if (auto colon = host.rfind(':'); colon != std::string::npos) {
    host = host.substr(0, colon);
  }
  if (proto == "http") {
    if (!net::isLoopbackHost(host)) {
      throw ConfigError("--server " + url +
                        ": plain HTTP is allowed only on loopback; use a kubeconfig for TLS");
    }
    c.noProxy = true;
  } else if (proto != "https") {
    throw ConfigError("--server '" + url + "' must be http:// (loopback) or https://");
  }
  c.server = url;
  while (c.server.size() > 1 && c.server.back() == '/') c.server.pop_back();
  c.source = "--server " + c.server;
  return c;
}

ClusterConfig resolveClusterConfig(const std::string& serverFlag, const std::string& kubeconfigFlag,
                                   const std::string& contextFlag) {
  if (!serverFlag.empty()) return serverUrlConfig(serverFlag);
  if (!kubeconfigFlag.empty()) return kubeconfigConfig(kubeconfigFlag, contextFlag);
  if (const char* env = std::getenv("KUBECONFIG"); env != nullptr && *env != '\0') {
    return kubeconfigConfig(env, contextFlag);
  }
  if (const char* host = std::getenv("KUBERNETES_SERVICE_HOST"); host != nullptr && *host != '\0') {
    return inClusterConfig();
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    const std::string path = std::string(home) + "/.kube/config";
    if (fs::exists(path)) return kubeconfigConfig(path, contextFlag);
  }
  throw ConfigError(
      "no API server configured: give --server, --kubeconfig or $KUBECONFIG, or run in a pod");
}

}  // namespace ledger::kube
