// Where the API server is and how to authenticate to it: in-cluster (the pod's
// service account), a kubeconfig, or a plain-HTTP loopback URL (tests, and
// `kubectl proxy`).
//
// Resolution order (resolveClusterConfig), as client-go does it: --server,
// then --kubeconfig, then $KUBECONFIG (a ':'-separated list, merged: the
// first file to set a value wins), then in-cluster when
// KUBERNETES_SERVICE_HOST is set, then ~/.kube/config.
//
// Supported kubeconfig fields: server, certificate-authority(-data),
// insecure-skip-tls-verify (honoured only when the kubeconfig says so),
// proxy-url; token, tokenFile, client-certificate(-data), client-key(-data),
// username/password. Exec and auth-provider plugins are not supported (a
// clear error names them). Relative paths are relative to the kubeconfig.
//
// Value types and pure functions (they read files); thread-safe.
// Errors: throws ConfigError on a missing, unreadable or incomplete
// configuration, naming the file and field.
#pragma once

#include <stdexcept>
#include <string>

namespace ledger::kube {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ClusterConfig {
  std::string server;  // "https://host:port[/prefix]" or "http://127.0.0.1:port"
  std::string token;
  std::string tokenFile;  // re-read before each request (rotated service-account tokens)
  std::string username, password;
  std::string caFile, caData;      // PEM
  std::string certFile, certData;  // PEM client certificate
  std::string keyFile, keyData;    // PEM client key
  bool insecureSkipTlsVerify = false;
  std::string proxyUrl;
  bool noProxy = false;  // loopback: never through an environment proxy
  std::string source;    // what this came from, for logs ("in-cluster", "kubeconfig …")
};

inline constexpr const char* kServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

// From KUBERNETES_SERVICE_HOST/PORT and `saDir`/{token,ca.crt}.
ClusterConfig inClusterConfig(const std::string& saDir = kServiceAccountDir);
// `paths` is one file or a ':'-separated list; `context` empty: current-context.
ClusterConfig kubeconfigConfig(const std::string& paths, const std::string& context = "");
// http:// only on a loopback host (127.0.0.0/8, ::1, localhost); https:// with
// the system CA store and no credentials.
ClusterConfig serverUrlConfig(const std::string& url);
ClusterConfig resolveClusterConfig(const std::string& serverFlag, const std::string& kubeconfigFlag,
                                   const std::string& contextFlag);

// RFC 4648 base64 (whitespace ignored). Throws ConfigError on bad input.
std::string decodeBase64(const std::string& text);

}  // namespace ledger::kube
