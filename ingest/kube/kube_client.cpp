#include "ingest/kube/kube_client.h"

#include <curl/curl.h>

#include <exception>
#include <fstream>
#include <mutex>
#include <sstream>

namespace ledger::kube {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kMaxErrorBody = 64 * 1024;

void globalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::string readToken(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError("cannot read token file " + path);
  std::ostringstream s;
  s << in.rdbuf();
  std::string t = s.str();
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ')) t.pop_back();
  return t;
}

struct Transfer {
  CURL* easy = nullptr;
  const std::function<bool(std::string_view)>* onBody = nullptr;
  const std::function<void(long)>* onHeaders = nullptr;
  HttpResponse* response = nullptr;
  Clock::time_point lastActivity;
  std::exception_ptr error;  // thrown by a callback; rethrown after the transfer
};

std::size_t onWrite(char* data, std::size_t size, std::size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::size_t n = size * count;
  t->lastActivity = Clock::now();
  if (t->response->status == 0)
    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &t->response->status);
  const bool ok = t->response->status >= 200 && t->response->status < 300;
  if (ok && t->onBody != nullptr) {
    try {
      if (!(*t->onBody)(std::string_view(data, n))) {
        t->response->stoppedByReader = true;
        return 0;  // ends the transfer (CURLE_WRITE_ERROR), which we asked for
      }
    } catch (...) {
      t->error = std::current_exception();  // never through libcurl's C frames
      return 0;
    }
    return n;
  }
  if (t->onBody != nullptr && t->response->body.size() >= kMaxErrorBody) return n;
  t->response->body.append(data, n);
  return n;
}

std::size_t onHeader(char* data, std::size_t size, std::size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::size_t n = size * count;
  t->lastActivity = Clock::now();
  // The blank line ends a response's headers (interim 1xx responses have their own).
  if ((n == 2 && data[0] == '\r') || (n == 1 && data[0] == '\n')) {
    long status = 0;
    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
    if (status >= 200) {
      t->response->status = status;
      try {
        if (t->onHeaders != nullptr && *t->onHeaders) (*t->onHeaders)(status);
      } catch (...) {
        t->error = std::current_exception();
        return 0;
      }
    }
  }
  return n;
}

curl_blob blobOf(const std::string& s) {
  curl_blob b{};
  b.data = const_cast<char*>(s.data());
  b.len = s.size();
  b.flags = CURL_BLOB_COPY;
  return b;
}

}  // namespace

struct KubeClient::Handles {
  CURL* easy = nullptr;
  CURLM* multi = nullptr;
  curl_slist* headers = nullptr;
  curl_slist* postHeaders = nullptr;  // `headers` plus the body's Content-Type
  std::string headerToken;            // the token the header lists were built with
  char error[CURL_ERROR_SIZE] = {};

  ~Handles() {
    if (headers != nullptr) curl_slist_free_all(headers);
    if (postHeaders != nullptr) curl_slist_free_all(postHeaders);
    if (easy != nullptr) curl_easy_cleanup(easy);
    if (multi != nullptr) curl_multi_cleanup(multi);
  }
};

KubeClient::KubeClient(ClusterConfig config)
    : config_(std::move(config)), handles_(std::make_unique<Handles>()) {
  globalInit();
  handles_->easy = curl_easy_init();
  handles_->multi = curl_multi_init();
  if (handles_->easy == nullptr || handles_->multi == nullptr) {
    throw TransportError("libcurl could not create a handle");
  }
  CURL* e = handles_->easy;
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, handles_->error);
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
  curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(e, CURLOPT_TCP_KEEPIDLE, 30L);
  curl_easy_setopt(e, CURLOPT_TCP_KEEPINTVL, 15L);
  // gzip alone, as client-go asks: the API server compresses with nothing
  // else (APIResponseCompression), and a proxy offered brotli might pick it.
  curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "gzip");
  curl_easy_setopt(e, CURLOPT_USERAGENT, "ledger-ingest/" LEDGER_VERSION);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, onWrite);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, onHeader);
  if (!config_.caFile.empty()) curl_easy_setopt(e, CURLOPT_CAINFO, config_.caFile.c_str());
  if (!config_.caData.empty()) {
    curl_blob b = blobOf(config_.caData);
    curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &b);
  }
  if (!config_.certFile.empty()) curl_easy_setopt(e, CURLOPT_SSLCERT, config_.certFile.c_str());
  if (!config_.certData.empty()) {
    curl_blob b = blobOf(config_.certData);
    curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &b);
  }
  if (!config_.keyFile.empty()) curl_easy_setopt(e, CURLOPT_SSLKEY, config_.keyFile.c_str());
  if (!config_.keyData.empty()) {
    curl_blob b = blobOf(config_.keyData);
    curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &b);
  }
  if (!config_.certFile.empty() || !config_.certData.empty()) {
    curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
  }
  if (config_.insecureSkipTlsVerify) {
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (!config_.username.empty()) {
    curl_easy_setopt(e, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    curl_easy_setopt(e, CURLOPT_USERNAME, config_.username.c_str());
    curl_easy_setopt(e, CURLOPT_PASSWORD, config_.password.c_str());
  }
  if (!config_.proxyUrl.empty()) curl_easy_setopt(e, CURLOPT_PROXY, config_.proxyUrl.c_str());
  if (config_.noProxy) curl_easy_setopt(e, CURLOPT_NOPROXY, "*");
}

KubeClient::~KubeClient() = default;

void KubeClient::interrupt() {
  interrupted_ = true;
  curl_multi_wakeup(handles_->multi);
}

HttpResponse KubeClient::get(const std::string& path, std::chrono::milliseconds timeout) {
  return perform(path, nullptr, timeout, timeout, nullptr, nullptr);
}

HttpResponse KubeClient::post(const std::string& path, const std::string& json,
                              std::chrono::milliseconds timeout) {
  return perform(path, &json, timeout, timeout, nullptr, nullptr);
}

HttpResponse KubeClient::stream(const std::string& path, std::chrono::milliseconds idleTimeout,
                                const std::function<bool(std::string_view)>& onBody,
                                const std::function<void(long)>& onHeaders) {
  return perform(path, nullptr, std::chrono::milliseconds(0), idleTimeout, &onBody, &onHeaders);
}

HttpResponse KubeClient::perform(const std::string& path, const std::string* postBody,
                                 std::chrono::milliseconds timeout,
                                 std::chrono::milliseconds idleTimeout,
                                 const std::function<bool(std::string_view)>* onBody,
                                 const std::function<void(long)>* onHeaders) {
  if (interrupted_) throw Interrupted();
  Handles& h = *handles_;
  std::string token = config_.token;
  if (!config_.tokenFile.empty()) token = readToken(config_.tokenFile);
  if (h.headers == nullptr || token != h.headerToken) {
    if (h.headers != nullptr) curl_slist_free_all(h.headers);
    if (h.postHeaders != nullptr) curl_slist_free_all(h.postHeaders);
    h.headers = curl_slist_append(nullptr, "Accept: application/json");
    h.postHeaders = curl_slist_append(nullptr, "Accept: application/json");
    h.postHeaders = curl_slist_append(h.postHeaders, "Content-Type: application/json");
    if (!token.empty()) {
      const std::string auth = "Authorization: Bearer " + token;
      h.headers = curl_slist_append(h.headers, auth.c_str());
      h.postHeaders = curl_slist_append(h.postHeaders, auth.c_str());
    }
    h.headerToken = token;
  }
  const char* method = postBody != nullptr ? "POST " : "GET ";
  const std::string url = config_.server + path;
  HttpResponse response;
  Transfer t{h.easy, onBody, onHeaders, &response, Clock::now(), nullptr};
  curl_easy_setopt(h.easy, CURLOPT_URL, url.c_str());
  // The handle is shared by both methods: each request sets its own.
  if (postBody != nullptr) {
    curl_easy_setopt(h.easy, CURLOPT_POST, 1L);
    curl_easy_setopt(h.easy, CURLOPT_POSTFIELDS, postBody->data());
    curl_easy_setopt(h.easy, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(postBody->size()));
    curl_easy_setopt(h.easy, CURLOPT_HTTPHEADER, h.postHeaders);
  } else {
    curl_easy_setopt(h.easy, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(h.easy, CURLOPT_HTTPHEADER, h.headers);
  }
  curl_easy_setopt(h.easy, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  curl_easy_setopt(h.easy, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(h.easy, CURLOPT_HEADERDATA, &t);
  h.error[0] = '\0';
  curl_multi_add_handle(h.multi, h.easy);
  struct Remove {
    Handles& h;
    ~Remove() { curl_multi_remove_handle(h.multi, h.easy); }
  } remove{h};
  CURLcode result = CURLE_OK;
  for (;;) {
    int running = 0;
    curl_multi_perform(h.multi, &running);
    bool done = false;
    int queued = 0;
    while (CURLMsg* msg = curl_multi_info_read(h.multi, &queued)) {
      if (msg->msg == CURLMSG_DONE) {
        result = msg->data.result;
        done = true;
      }
    }
    if (done) break;
    if (interrupted_) throw Interrupted();
    if (idleTimeout.count() > 0 && Clock::now() - t.lastActivity > idleTimeout) {
      throw StallError(method + path + ": no data for " + std::to_string(idleTimeout.count()) +
                       " ms (stalled)");
    }
    curl_multi_poll(h.multi, nullptr, 0, 100, nullptr);
  }
  if (t.error) std::rethrow_exception(t.error);
  if (response.status == 0) curl_easy_getinfo(h.easy, CURLINFO_RESPONSE_CODE, &response.status);
  if (result == CURLE_WRITE_ERROR && response.stoppedByReader) return response;
  if (result != CURLE_OK) {
    if (interrupted_) throw Interrupted();
    throw TransportError(method + path + ": " +
                         (h.error[0] != '\0' ? std::string(h.error) : curl_easy_strerror(result)));
  }
  return response;
}

}  // namespace ledger::kube
