// A request to `ledger-query serve` and its answer, apart from HTTP: the
// handlers (kube_api.h, ledger_api.h) map one to the other, so tests and the
// fuzz target drive them without a socket. Value types.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace ledger::serve {

inline constexpr std::string_view kJsonType = "application/json; charset=utf-8";

struct ApiRequest {
  std::string method = "GET";
  std::string path;  // decoded, without the query
  std::multimap<std::string, std::string> query;
  std::string accept;  // the Accept header

  // The first value of a query parameter.
  std::optional<std::string> param(const std::string& name) const {
    auto it = query.find(name);
    if (it == query.end()) return std::nullopt;
    return it->second;
  }
};

// What a watch streams (kube_api.h): the recorded changes after `afterSeq`
// to one resource, filtered as its list would be.
struct WatchPlan {
  std::string group, version, kind;
  std::string ns;  // empty: every namespace
  std::string labelSelector, fieldSelector;
  bool table = false;  // each event's object is a one-row Table
  std::string tableApiVersion = "meta.k8s.io/v1";
  bool headersSent = false;  // the initial events carried the columns
  std::uint64_t afterSeq = 0;
  std::int64_t momentNs = 0;        // AGE is relative to this
  std::int64_t timeoutSeconds = 0;  // 0: until the client goes
};

struct ApiResponse {
  int status = 200;
  // With its charset: cpp-httplib compresses a body only when the type is
  // exactly "application/json", and then with Brotli at its slowest quality
  // for any client that accepts it (browsers do), which cost more than the
  // answer itself. The answers go uncompressed.
  std::string contentType = std::string(kJsonType);
  std::string body;
  std::optional<WatchPlan> watch;  // set: stream it after `body` (initial events)

  // A 200 answer with a JSON body.
  static ApiResponse ofJson(std::string json) {
    ApiResponse res;
    res.body = std::move(json);
    return res;
  }
};

}  // namespace ledger::serve
