// A fake Kubernetes API server for the watch daemon's tests, on 127.0.0.1:
// discovery (/api/v1, /apis/G, /apis/G/V), LIST with limit/continue paging
// over a snapshot, and chunked WATCH from a resourceVersion, fed by the
// changes a test makes (create/update/remove), with the faults a real
// cluster shows: dropped connections, 410 Gone (as an ERROR event or an HTTP
// status) after compaction, bookmarks, 5xx answers, stalls, restarts.
//
// Events (core v1): POST /api/v1/namespaces/NS/events stores the Event and
// answers 201, or 409 AlreadyExists when it holds one of that name, as the
// real server does; failRequests(n, status, "events") fails the next n.
//
// Times as the real server writes them: creationTimestamp at create (kept
// when the object brings one), and a managedFields entry with the time of
// each update; a LIST can be answered late (setListDelay).
//
// One global resourceVersion counter, as etcd's. Built-in (core) kinds are
// listed without apiVersion/kind on their items, as the real server does.
//
// Test-only. Thread safety: every member may be called from any thread
// (one mutex); handlers run on cpp-httplib's threads. Errors: start() throws
// std::runtime_error when the port cannot be bound.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace ledger::testing {

class FakeApiServer {
 public:
  using Json = nlohmann::json;
  struct Resource {
    std::string group;  // "" for core
    std::string version;
    std::string plural;
    std::string kind;
    bool namespaced = true;
  };
  enum class ExpiredAs { kErrorEvent, kHttp410 };

  FakeApiServer();
  ~FakeApiServer();
  FakeApiServer(const FakeApiServer&) = delete;
  FakeApiServer& operator=(const FakeApiServer&) = delete;

  void serve(const Resource& resource);  // discovery lists it from now on
  void start(int port = 0);              // 0: any free port; then port() tells
  void stop();                           // closes the listener and every open watch
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // Changes: each takes the next resourceVersion and reaches open watches.
  // create() fills uid (if absent), resourceVersion and creationTimestamp.
  Json create(const std::string& plural, Json object);
  Json update(const std::string& plural, const std::string& ns, const std::string& name,
              const std::function<void(Json&)>& mutate);
  void remove(const std::string& plural, const std::string& ns, const std::string& name);
  // Sends `line` as it is (one line of the watch stream) to the open and
  // later watches of `plural`, in order with the changes, taking the next
  // resourceVersion: what a faulty or hostile server might send.
  void sendRaw(const std::string& plural, std::string line);
  std::uint64_t resourceVersion() const;
  std::vector<Json> objects(const std::string& plural) const;

  // Faults.
  void compact();  // watches from an older resourceVersion now get 410
  void setExpiredAs(ExpiredAs how);
  void dropWatches();  // cut every open watch (no final chunk)
  void failRequests(int n, int status, const std::string& what = "any");  // "list", "watch"
  void setStalled(bool stalled);  // open watches go silent (no data at all)
  // The first page of every LIST of `plural` is answered `delay` late.
  void setListDelay(const std::string& plural, std::chrono::milliseconds delay);
  void sendBookmarks();  // a BOOKMARK at the current RV to each open watch

  // Observations.
  int openWatches() const;
  int listRequests() const;
  // The Accept-Encoding of the last LIST (cpp-httplib answers brotli when it
  // is offered; a real API server compresses with gzip alone).
  std::string listAcceptEncoding() const;
  int watchRequests() const;
  // Events stored (in name order per namespace) and POSTs received (any answer).
  std::vector<Json> events() const;
  int eventPosts() const;
  // Calls `pred` under no lock every 10 ms until it holds or `timeoutMs` passes.
  static bool waitFor(const std::function<bool()>& pred, int timeoutMs);

 private:
  struct Change {
    std::uint64_t rv;
    std::string plural;
    std::string type;
    Json object;
    std::string raw;  // sendRaw(): sent as it is instead of {type, object}
  };
  struct Watch;
  void route(httplib::Server& server);
  void discovery(const httplib::Request& req, httplib::Response& res);
  void collection(const httplib::Request& req, httplib::Response& res, const std::string& group,
                  const std::string& version, const std::string& ns, const std::string& plural);
  void list(const httplib::Request& req, httplib::Response& res, const Resource& r,
            const std::string& ns);
  void watch(const httplib::Request& req, httplib::Response& res, const Resource& r,
             const std::string& ns);
  void postEvent(const httplib::Request& req, httplib::Response& res, const std::string& ns);
  bool takeFailure(const std::string& what, int* status);
  const Resource* find(const std::string& group, const std::string& version,
                       const std::string& plural) const;
  Json record(const std::string& plural, const std::string& type, Json object);

  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::vector<Resource> resources_;
  std::map<std::string, std::map<std::string, Json>> store_;  // plural -> ns/name -> object
  std::vector<Change> history_;
  std::uint64_t rv_ = 100;
  std::uint64_t compactedRv_ = 0;
  std::uint64_t uidCounter_ = 0;
  ExpiredAs expiredAs_ = ExpiredAs::kErrorEvent;
  std::uint64_t dropGeneration_ = 0;
  std::uint64_t bookmarkGeneration_ = 0;
  bool stalled_ = false;
  bool stopping_ = false;
  int failCount_ = 0;
  int failStatus_ = 500;
  std::string failWhat_;
  int openWatches_ = 0;
  int listRequests_ = 0;
  std::string listAcceptEncoding_;
  int watchRequests_ = 0;
  std::map<std::string, std::chrono::milliseconds> listDelays_;  // plural ->
  std::map<std::string, Json> events_;                           // ns/name -> Event
  int eventPosts_ = 0;
  std::map<std::string, std::pair<std::uint64_t, std::vector<Json>>> snapshots_;  // continue
  std::uint64_t snapshotCounter_ = 0;

  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace ledger::testing
