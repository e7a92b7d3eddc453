// FakeApiServer's Events endpoint (fake_apiserver.h): what the API server
// checks on a create that the daemon could get wrong, nothing more.
#include <httplib.h>

#include "tests/ingest/fake_apiserver.h"

namespace ledger::testing {

namespace {

void refuse(httplib::Response& res, int code, const std::string& reason,
            const std::string& message) {
  res.status = code;
  nlohmann::json body = {{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
                         {"code", code},     {"reason", reason},   {"message", message}};
  res.set_content(body.dump(), "application/json");
}

}  // namespace

void FakeApiServer::postEvent(const httplib::Request& req, httplib::Response& res,
                              const std::string& ns) {
  std::lock_guard lock(mu_);
  ++eventPosts_;
  if (int st = 0; takeFailure("events", &st)) {
    return refuse(res, st, st == 403 ? "Forbidden" : "InternalError", "injected failure");
  }
  if (req.get_header_value("Content-Type") != "application/json") {
    return refuse(res, 415, "UnsupportedMediaType", "not application/json");
  }
  Json event = Json::parse(req.body, nullptr, false);
  if (event.is_discarded() || !event.is_object() || event.value("kind", "") != "Event" ||
      event.value("apiVersion", "") != "v1") {
    return refuse(res, 400, "BadRequest", "not a v1 Event");
  }
  const std::string name = event["metadata"].value("name", "");
  if (name.empty() || event["metadata"].value("namespace", ns) != ns ||
      event["involvedObject"].value("namespace", "") != ns) {
    return refuse(res, 422, "Invalid", "name missing or namespace mismatch");
  }
  auto [it, inserted] = events_.emplace(ns + "/" + name, event);
  if (!inserted) {
    return refuse(res, 409, "AlreadyExists", "events \"" + name + "\" already exists");
  }
  // Not in the watched history: no watch serves events here.
  it->second["metadata"]["uid"] = "event-uid-" + std::to_string(events_.size());
  res.status = 201;
  res.set_content(it->second.dump(), "application/json");
}

std::vector<FakeApiServer::Json> FakeApiServer::events() const {
  std::lock_guard lock(mu_);
  std::vector<Json> out;
  for (const auto& [k, e] : events_) out.push_back(e);
  return out;
}

int FakeApiServer::eventPosts() const {
  std::lock_guard lock(mu_);
  return eventPosts_;
}

}  // namespace ledger::testing
