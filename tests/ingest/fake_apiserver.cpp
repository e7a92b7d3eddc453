#include "tests/ingest/fake_apiserver.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <ctime>
#include <stdexcept>
#include <thread>

namespace ledger::testing {

namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

std::string key(const Json& obj) {
  const Json& m = obj["metadata"];
  return m.value("namespace", "") + "/" + m.value("name", "");
}

Json status(int code, const std::string& reason, const std::string& message) {
  return {{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
          {"code", code},     {"reason", reason},   {"message", message}};
}

void answer(httplib::Response& res, int code, const std::string& reason,
            const std::string& message) {
  res.status = code;
  res.set_content(status(code, reason, message).dump(), "application/json");
}

std::string gv(const std::string& group, const std::string& version) {
  return group.empty() ? version : group + "/" + version;
}

std::string nameFilter(const httplib::Request& req) {
  const std::string fs = req.get_param_value("fieldSelector");
  const std::string prefix = "metadata.name=";
  return fs.rfind(prefix, 0) == 0 ? fs.substr(prefix.size()) : std::string();
}

// The wall clock as the API server writes times: RFC 3339, whole seconds.
std::string serverNow() {
  const auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

bool matches(const Json& obj, const std::string& ns, const std::string& name) {
  const Json& m = obj["metadata"];
  return (ns.empty() || m.value("namespace", "") == ns) &&
         (name.empty() || m.value("name", "") == name);
}

}  // namespace

struct FakeApiServer::Watch {
  std::string plural, ns, name;
  std::size_t next = 0;
  std::uint64_t dropGeneration = 0;
  std::uint64_t bookmarkGeneration = 0;
  std::chrono::steady_clock::time_point deadline;
  Resource resource;
};

FakeApiServer::FakeApiServer() { std::signal(SIGPIPE, SIG_IGN); }

FakeApiServer::~FakeApiServer() { stop(); }

void FakeApiServer::serve(const Resource& resource) {
  std::lock_guard lock(mu_);
  resources_.push_back(resource);
}

void FakeApiServer::start(int port) {
  server_ = std::make_unique<httplib::Server>();
  server_->new_task_queue = [] { return new httplib::ThreadPool(64); };
  route(*server_);
  if (port == 0) {
    port_ = server_->bind_to_any_port("127.0.0.1");
    if (port_ < 0) throw std::runtime_error("fake API server: cannot bind");
  } else {
    bool bound = false;
    for (int i = 0; i < 100 && !bound; ++i) {  // the old socket may linger briefly
      bound = server_->bind_to_port("127.0.0.1", port);
      if (!bound) std::this_thread::sleep_for(20ms);
    }
    if (!bound)
      throw std::runtime_error("fake API server: cannot bind port " + std::to_string(port));
    port_ = port;
  }
  {
    std::lock_guard lock(mu_);
    stopping_ = false;
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
}

void FakeApiServer::stop() {
  if (!server_) return;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  server_->stop();
  if (thread_.joinable()) thread_.join();
  server_.reset();
}

void FakeApiServer::route(httplib::Server& s) {
  auto disc = [this](const httplib::Request& req, httplib::Response& res) { discovery(req, res); };
  s.Get(R"(/api/v1)", disc);
  s.Get(R"(/apis/([^/]+))", disc);
  s.Get(R"(/apis/([^/]+)/([^/]+))", disc);
  s.Post(R"(/api/v1/namespaces/([^/]+)/events)",
         [this](const httplib::Request& req, httplib::Response& res) {
           postEvent(req, res, req.matches[1]);
         });
  s.Get(R"(/api/v1/namespaces/([^/]+)/([^/]+))",
        [this](const httplib::Request& req, httplib::Response& res) {
          collection(req, res, "", "v1", req.matches[1], req.matches[2]);
        });
  s.Get(R"(/api/v1/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
    collection(req, res, "", "v1", "", req.matches[1]);
  });
  s.Get(R"(/apis/([^/]+)/([^/]+)/namespaces/([^/]+)/([^/]+))",
        [this](const httplib::Request& req, httplib::Response& res) {
          collection(req, res, req.matches[1], req.matches[2], req.matches[3], req.matches[4]);
        });
  s.Get(R"(/apis/([^/]+)/([^/]+)/([^/]+))",
        [this](const httplib::Request& req, httplib::Response& res) {
          collection(req, res, req.matches[1], req.matches[2], "", req.matches[3]);
        });
}

void FakeApiServer::discovery(const httplib::Request& req, httplib::Response& res) {
  std::lock_guard lock(mu_);
  const std::string group = req.path == "/api/v1" ? "" : std::string(req.matches[1]);
  const std::string version =
      req.path == "/api/v1" ? "v1" : (req.matches.size() > 2 ? std::string(req.matches[2]) : "");
  if (version.empty()) {  // /apis/GROUP
    Json versions = Json::array();
    for (const auto& r : resources_) {
      if (r.group == group)
        versions.push_back({{"groupVersion", gv(group, r.version)}, {"version", r.version}});
    }
    if (versions.empty())
      return answer(res, 404, "NotFound", "the server could not find the requested resource");
    Json body = {{"kind", "APIGroup"},
                 {"apiVersion", "v1"},
                 {"name", group},
                 {"versions", versions},
                 {"preferredVersion", versions[0]}};
    res.set_content(body.dump(), "application/json");
    return;
  }
  Json list = Json::array();
  for (const auto& r : resources_) {
    if (r.group == group && r.version == version) {
      list.push_back({{"name", r.plural},
                      {"singularName", ""},
                      {"namespaced", r.namespaced},
                      {"kind", r.kind},
                      {"verbs", {"get", "list", "watch"}}});
      list.push_back({{"name", r.plural + "/status"},
                      {"namespaced", r.namespaced},
                      {"kind", r.kind},
                      {"verbs", {"get", "patch"}}});
    }
  }
  if (list.empty())
    return answer(res, 404, "NotFound", "the server could not find the requested resource");
  Json body = {{"kind", "APIResourceList"},
               {"apiVersion", "v1"},
               {"groupVersion", gv(group, version)},
               {"resources", list}};
  res.set_content(body.dump(), "application/json");
}

const FakeApiServer::Resource* FakeApiServer::find(const std::string& group,
                                                   const std::string& version,
                                                   const std::string& plural) const {
  for (const auto& r : resources_) {
    if (r.group == group && r.plural == plural && (version.empty() || r.version == version))
      return &r;
  }
  return nullptr;
}

bool FakeApiServer::takeFailure(const std::string& what, int* status) {
  if (failCount_ <= 0 || (failWhat_ != "any" && failWhat_ != what)) return false;
  --failCount_;
  *status = failStatus_;
  return true;
}

void FakeApiServer::collection(const httplib::Request& req, httplib::Response& res,
                               const std::string& group, const std::string& version,
                               const std::string& ns, const std::string& plural) {
  Resource r;
  {
    std::lock_guard lock(mu_);
    const Resource* found = find(group, version, plural);
    if (found == nullptr)
      return answer(res, 404, "NotFound", "the server could not find the requested resource");
    r = *found;
  }
  if (req.get_param_value("watch") == "1" || req.get_param_value("watch") == "true") {
    watch(req, res, r, ns);
  } else {
    list(req, res, r, ns);
  }
}

void FakeApiServer::list(const httplib::Request& req, httplib::Response& res, const Resource& r,
                         const std::string& ns) {
  // A slow resource: the first page of each LIST waits, as a real server's
  // does under load or for a big collection (no lock held meanwhile).
  std::chrono::milliseconds delay{0};
  {
    std::lock_guard lock(mu_);
    if (auto it = listDelays_.find(r.plural);
        it != listDelays_.end() && !req.has_param("continue")) {
      delay = it->second;
    }
  }
  if (delay.count() > 0) std::this_thread::sleep_for(delay);
  std::lock_guard lock(mu_);
  ++listRequests_;
  listAcceptEncoding_ = req.get_header_value("Accept-Encoding");
  if (int st = 0; takeFailure("list", &st))
    return answer(res, st, "InternalError", "injected failure");
  const std::size_t limit = req.has_param("limit") ? std::stoul(req.get_param_value("limit")) : 0;
  const std::string cont = req.get_param_value("continue");
  std::string snapId;
  std::size_t offset = 0;
  if (!cont.empty()) {
    const auto colon = cont.rfind(':');
    snapId = cont.substr(0, colon);
    offset = std::stoul(cont.substr(colon + 1));
    auto it = snapshots_.find(snapId);
    if (it == snapshots_.end() || it->second.first < compactedRv_) {
      return answer(res, 410, "Expired", "The provided continue parameter is too old");
    }
  } else {
    snapId = "snap-" + std::to_string(++snapshotCounter_);
    std::vector<Json> items;
    const std::string name = nameFilter(req);
    for (const auto& [k, obj] : store_[r.plural]) {
      if (matches(obj, ns, name)) items.push_back(obj);
    }
    snapshots_[snapId] = {rv_, std::move(items)};
  }
  const auto& [snapRv, items] = snapshots_[snapId];
  const std::size_t end = limit == 0 ? items.size() : std::min(items.size(), offset + limit);
  Json page = Json::array();
  for (std::size_t i = offset; i < end; ++i) {
    Json item = items[i];
    if (r.group.empty()) {  // built-in kinds: items carry no apiVersion/kind
      item.erase("apiVersion");
      item.erase("kind");
    }
    page.push_back(std::move(item));
  }
  Json meta = {{"resourceVersion", std::to_string(snapRv)}};
  if (end < items.size()) meta["continue"] = snapId + ":" + std::to_string(end);
  Json body = {{"kind", r.kind + "List"},
               {"apiVersion", gv(r.group, r.version)},
               {"metadata", meta},
               {"items", page}};
  res.set_content(body.dump(), "application/json");
}

void FakeApiServer::watch(const httplib::Request& req, httplib::Response& res, const Resource& r,
                          const std::string& ns) {
  auto w = std::make_shared<Watch>();
  {
    std::lock_guard lock(mu_);
    ++watchRequests_;
    if (int st = 0; takeFailure("watch", &st))
      return answer(res, st, "InternalError", "injected failure");
    const std::string rvText = req.get_param_value("resourceVersion");
    const std::uint64_t from = rvText.empty() ? rv_ : std::stoull(rvText);
    if (from < compactedRv_) {
      const std::string msg =
          "too old resource version: " + rvText + " (" + std::to_string(compactedRv_) + ")";
      if (expiredAs_ == ExpiredAs::kHttp410) return answer(res, 410, "Expired", msg);
      const Json ev = {{"type", "ERROR"}, {"object", status(410, "Expired", msg)}};
      res.set_content(ev.dump() + "\n", "application/json;stream=watch");
      return;
    }
    w->plural = r.plural;
    w->ns = ns;
    w->name = nameFilter(req);
    w->resource = r;
    w->next = static_cast<std::size_t>(
        std::upper_bound(history_.begin(), history_.end(), from,
                         [](std::uint64_t v, const Change& c) { return v < c.rv; }) -
        history_.begin());
    w->dropGeneration = dropGeneration_;
    w->bookmarkGeneration = bookmarkGeneration_;
    const long timeout =
        req.has_param("timeoutSeconds") ? std::stol(req.get_param_value("timeoutSeconds")) : 1800;
    w->deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout);
    ++openWatches_;
  }
  res.set_chunked_content_provider(
      "application/json;stream=watch",
      [this, w](std::size_t, httplib::DataSink& sink) {
        std::string out;
        bool done = false;
        {
          std::unique_lock lock(mu_);
          changed_.wait_for(lock, 200ms, [&] {
            return stopping_ || w->dropGeneration != dropGeneration_ ||
                   (!stalled_ &&
                    (w->next < history_.size() || w->bookmarkGeneration != bookmarkGeneration_));
          });
          if (stopping_ || w->dropGeneration != dropGeneration_)
            return false;  // cut, no final chunk
          if (stalled_) return true;
          for (; w->next < history_.size(); ++w->next) {
            const Change& c = history_[w->next];
            if (c.plural == w->plural && !c.raw.empty()) {
              out += c.raw + "\n";
            } else if (c.plural == w->plural && matches(c.object, w->ns, w->name)) {
              out += Json{{"type", c.type}, {"object", c.object}}.dump() + "\n";
            }
          }
          if (w->bookmarkGeneration != bookmarkGeneration_) {
            w->bookmarkGeneration = bookmarkGeneration_;
            const Json bm = {{"type", "BOOKMARK"},
                             {"object",
                              {{"apiVersion", gv(w->resource.group, w->resource.version)},
                               {"kind", w->resource.kind},
                               {"metadata", {{"resourceVersion", std::to_string(rv_)}}}}}};
            out += bm.dump() + "\n";
          }
          done = std::chrono::steady_clock::now() > w->deadline;
        }
        // A blank line now and then finds out when the client has gone.
        if (out.empty()) out = "\n";
        if (!sink.write(out.data(), out.size())) return false;
        if (done) sink.done();
        return true;
      },
      [this](bool) {
        std::lock_guard lock(mu_);
        --openWatches_;
      });
}

Json FakeApiServer::record(const std::string& plural, const std::string& type, Json object) {
  object["metadata"]["resourceVersion"] = std::to_string(++rv_);
  history_.push_back({rv_, plural, type, object, {}});
  changed_.notify_all();
  return object;
}

Json FakeApiServer::create(const std::string& plural, Json object) {
  std::lock_guard lock(mu_);
  const Resource* r = nullptr;
  for (const auto& res : resources_) {
    if (res.plural == plural) r = &res;
  }
  if (r == nullptr) throw std::invalid_argument("fake API server does not serve " + plural);
  object["apiVersion"] = gv(r->group, r->version);
  object["kind"] = r->kind;
  Json& m = object["metadata"];
  if (!m.contains("uid")) m["uid"] = "uid-" + std::to_string(++uidCounter_);
  // As the real server: set at creation, kept when the object brings one
  // (a test loading a cluster's state).
  if (!m.contains("creationTimestamp")) m["creationTimestamp"] = serverNow();
  Json stored = record(plural, "ADDED", std::move(object));
  store_[plural][key(stored)] = stored;
  return stored;
}

Json FakeApiServer::update(const std::string& plural, const std::string& ns,
                           const std::string& name, const std::function<void(Json&)>& mutate) {
  std::lock_guard lock(mu_);
  auto it = store_[plural].find(ns + "/" + name);
  if (it == store_[plural].end())
    throw std::invalid_argument("no " + plural + " " + ns + "/" + name);
  Json obj = it->second;
  mutate(obj);
  // The server stamps the writer's field manager with the time of the write.
  obj["metadata"]["managedFields"] = Json::array(
      {{{"manager", "fake-controller"}, {"operation", "Update"}, {"time", serverNow()}}});
  it->second = record(plural, "MODIFIED", std::move(obj));
  return it->second;
}

void FakeApiServer::remove(const std::string& plural, const std::string& ns,
                           const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = store_[plural].find(ns + "/" + name);
  if (it == store_[plural].end())
    throw std::invalid_argument("no " + plural + " " + ns + "/" + name);
  record(plural, "DELETED", it->second);
  store_[plural].erase(it);
}

void FakeApiServer::setListDelay(const std::string& plural, std::chrono::milliseconds delay) {
  std::lock_guard lock(mu_);
  listDelays_[plural] = delay;
}

void FakeApiServer::sendRaw(const std::string& plural, std::string line) {
  std::lock_guard lock(mu_);
  history_.push_back({++rv_, plural, "RAW", nullptr, std::move(line)});
  changed_.notify_all();
}

std::uint64_t FakeApiServer::resourceVersion() const {
  std::lock_guard lock(mu_);
  return rv_;
}

std::vector<Json> FakeApiServer::objects(const std::string& plural) const {
  std::lock_guard lock(mu_);
  std::vector<Json> out;
  auto it = store_.find(plural);
  if (it != store_.end()) {
    for (const auto& [k, v] : it->second) out.push_back(v);
  }
  return out;
}

void FakeApiServer::compact() {
  std::lock_guard lock(mu_);
  compactedRv_ = rv_;
}

void FakeApiServer::setExpiredAs(ExpiredAs how) {
  std::lock_guard lock(mu_);
  expiredAs_ = how;
}

void FakeApiServer::dropWatches() {
  {
    std::lock_guard lock(mu_);
    ++dropGeneration_;
  }
  changed_.notify_all();
}

void FakeApiServer::failRequests(int n, int status, const std::string& what) {
  std::lock_guard lock(mu_);
  failCount_ = n;
  failStatus_ = status;
  failWhat_ = what;
}

void FakeApiServer::setStalled(bool stalled) {
  {
    std::lock_guard lock(mu_);
    stalled_ = stalled;
  }
  changed_.notify_all();
}

void FakeApiServer::sendBookmarks() {
  {
    std::lock_guard lock(mu_);
    ++bookmarkGeneration_;
  }
  changed_.notify_all();
}

int FakeApiServer::openWatches() const {
  std::lock_guard lock(mu_);
  return openWatches_;
}

int FakeApiServer::listRequests() const {
  std::lock_guard lock(mu_);
  return listRequests_;
}

std::string FakeApiServer::listAcceptEncoding() const {
  std::lock_guard lock(mu_);
  return listAcceptEncoding_;
}

int FakeApiServer::watchRequests() const {
  std::lock_guard lock(mu_);
  return watchRequests_;
}

bool FakeApiServer::waitFor(const std::function<bool()>& pred, int timeoutMs) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

}  // namespace ledger::testing
