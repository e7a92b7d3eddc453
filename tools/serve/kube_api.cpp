#include "tools/serve/kube_api.h"

#include <charconv>
#include <vector>

#include "schema/k8s/rfc3339.h"
#include "tools/serve/api_error.h"
#include "tools/serve/ledger_api.h"
#include "tools/serve/moment.h"
#include "tools/serve/selectors.h"

namespace ledger::serve {

namespace {

using nlohmann::json;

std::vector<std::string> splitPath(std::string_view path) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < path.size()) {
    if (path[i] == '/') {
      ++i;
      continue;
    }
    const auto end = std::min(path.find('/', i), path.size());
    out.emplace_back(path.substr(i, end - i));
    i = end;
  }
  for (const auto& s : out) {
    if (s == "." || s == "..") throw ApiError::notFound("path segment '" + s + "' is not served");
  }
  return out;
}

std::string hex(std::string_view bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

std::optional<std::string> unhex(std::string_view text) {
  if (text.size() % 2 != 0) return std::nullopt;
  std::string out;
  for (std::size_t i = 0; i < text.size(); i += 2) {
    unsigned v = 0;
    auto [end, ec] = std::from_chars(text.data() + i, text.data() + i + 2, v, 16);
    if (ec != std::errc() || end != text.data() + i + 2) return std::nullopt;
    out.push_back(static_cast<char>(v));
  }
  return out;
}

// A continue token: the moment's seq and the last item's key, so the next
// page starts after it at the same moment.
std::string continueToken(std::uint64_t seq, const std::string& ns, const std::string& name) {
  return std::to_string(seq) + "-" + hex(ns + '\0' + name);
}

std::pair<std::string, std::string> parseContinue(std::string_view token, std::uint64_t seq) {
  const auto dash = token.find('-');
  std::uint64_t tokenSeq = 0;
  std::optional<std::string> key;
  if (dash != std::string_view::npos) {
    auto [end, ec] = std::from_chars(token.data(), token.data() + dash, tokenSeq);
    if (ec == std::errc() && end == token.data() + dash) key = unhex(token.substr(dash + 1));
  }
  if (!key || key->find('\0') == std::string::npos) {
    throw ApiError::badRequest("continue token is malformed: pass back the metadata.continue " +
                               std::string("of the previous page"));
  }
  if (tokenSeq != seq) {
    throw ApiError::badRequest("continue token belongs to the list at seq " +
                               std::to_string(tokenSeq) + ", this request asks for seq " +
                               std::to_string(seq) + ": list again from the start");
  }
  const auto nul = key->find('\0');
  return {key->substr(0, nul), key->substr(nul + 1)};
}

// A negative limit is refused, not read as "no limit": a client that sent
// one asked for something else than the whole list.
std::uint64_t parseLimit(const std::string& text) {
  std::uint64_t limit = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), limit);
  if (ec == std::errc() && end == text.data() + text.size()) return limit;
  throw ApiError::badRequest("limit '" + text.substr(0, 40) +
                             "' is not a whole number of items up to 2^64-1");
}

// The parsed path of a resource request.
struct ResourcePath {
  std::string group, version;
  std::string ns;  // from /namespaces/{ns}/
  std::string plural, name;
  bool watchPrefix = false;
};

std::string qualified(const ApiResource& r) {
  return r.group.empty() ? r.plural : r.plural + "." + r.group;
}

json objectOf(const Record& record) {
  json object = json::parse(record.objectJson, nullptr, false);
  if (!object.is_object())
    throw ApiError::internal("record " + std::to_string(record.seq) + " holds no JSON object");
  if (!object.contains("apiVersion")) object["apiVersion"] = record.identity.apiVersion();
  if (!object.contains("kind")) object["kind"] = record.identity.kind;
  return object;
}

// The objects a list or get answers, after the selectors.
struct Listed {
  std::vector<json> items;
  std::vector<std::int64_t> recordedNs;  // each item's record's time; 0: computed
  std::string continueValue;
  std::uint64_t remaining = 0;
};

Listed listItems(const ApiResource& r, const Moment& moment, ServeContext& ctx,
                 const std::string& ns, const std::string& name, const ApiRequest& req) {
  const auto labels = LabelSelector::parse(req.param("labelSelector").value_or(""));
  const auto fields = FieldSelector::parse(req.param("fieldSelector").value_or(""));
  const std::uint64_t limit = name.empty() ? parseLimit(req.param("limit").value_or("0")) : 0;
  std::optional<std::pair<std::string, std::string>> after;
  if (auto token = req.param("continue"); token && !token->empty()) {
    after = parseContinue(*token, moment.seq);
  }
  Listed out;
  auto keep = [&](json object, const std::string& objectNs, const std::string& objectName,
                  std::int64_t recordedNs) {
    if (!name.empty() && objectName != name) return;
    if (after && std::tie(objectNs, objectName) <= std::tie(after->first, after->second)) return;
    if (!fields.matches(objectNs, objectName)) return;
    const json* meta = object.contains("metadata") ? &object["metadata"] : nullptr;
    if (!labels.matches(meta != nullptr && meta->contains("labels") ? (*meta)["labels"]
                                                                    : json(nullptr))) {
      return;
    }
    out.items.push_back(std::move(object));
    out.recordedNs.push_back(recordedNs);
  };
  if (r.ledgerOwn) {
    for (auto& object : ledgerObjects(r, moment, ctx, ns, name)) {
      const std::string objectNs = object["metadata"].value("namespace", "");
      const std::string objectName = object["metadata"].value("name", "");
      keep(std::move(object), objectNs, objectName, 0);
    }
  } else {
    for (const auto& v : listObjects(ctx.ledger, ctx.states, r, moment.seq, ns)) {
      if (!name.empty() && v.name != name) continue;
      if (after && std::tie(v.ns, v.name) <= std::tie(after->first, after->second)) continue;
      if (!fields.matches(v.ns, v.name)) continue;
      const Record record = readVersion(ctx.ledger, v.seq);
      keep(objectOf(record), v.ns, v.name, record.timeNs);
    }
  }
  if (limit > 0 && out.items.size() > limit) {
    out.remaining = out.items.size() - limit;
    out.items.resize(limit);
    out.recordedNs.resize(limit);
    const json& last = out.items.back()["metadata"];
    out.continueValue =
        continueToken(moment.seq, last.value("namespace", ""), last.value("name", ""));
  }
  return out;
}

json partialMetadata(const json& object, const std::string& tableApiVersion) {
  return {{"kind", "PartialObjectMetadata"},
          {"apiVersion", tableApiVersion},
          {"metadata", object.contains("metadata") ? object["metadata"] : json::object()}};
}

json tableRow(const std::vector<TableColumn>& columns, const json& object, std::int64_t momentNs,
              const std::string& includeObject, const std::string& tableApiVersion) {
  json row = {{"cells", tableCells(columns, object, momentNs)}};
  if (includeObject == "Object") {
    row["object"] = object;
  } else if (includeObject == "None") {
    row["object"] = nullptr;
  } else {
    row["object"] = partialMetadata(object, tableApiVersion);
  }
  return row;
}

std::string objectVersion(const ApiResource& r, const std::vector<json>& items) {
  if (!items.empty()) {
    const std::string av = items.front().value("apiVersion", "");
    const auto slash = av.rfind('/');
    return slash == std::string::npos ? av : av.substr(slash + 1);
  }
  return r.version;
}

ResourcePath parseResourcePath(const std::vector<std::string>& seg, std::size_t at) {
  ResourcePath p;
  if (seg[at] == "api") {
    p.version = seg[at + 1];
    at += 2;
  } else {
    p.group = seg[at + 1];
    p.version = seg[at + 2];
    at += 3;
  }
  std::vector<std::string> rest(seg.begin() + static_cast<std::ptrdiff_t>(at), seg.end());
  if (!rest.empty() && rest[0] == "watch") {
    p.watchPrefix = true;
    rest.erase(rest.begin());
  }
  if (rest.size() >= 3 && rest[0] == "namespaces") {
    p.ns = rest[1];
    rest.erase(rest.begin(), rest.begin() + 2);
  }
  if (rest.empty()) throw ApiError::notFound("no resource named in the path");
  if (rest.size() > 2) {
    throw ApiError::notFound("subresource '" + rest[2] +
                             "' is not served: the ledger has objects only");
  }
  p.plural = rest[0];
  if (rest.size() == 2) p.name = rest[1];
  return p;
}

}  // namespace

TableRequest wantsTable(const std::string& accept) {
  TableRequest out;
  // Alternatives in order of preference; the first we can give wins.
  std::size_t start = 0;
  while (start <= accept.size()) {
    auto end = accept.find(',', start);
    if (end == std::string::npos) end = accept.size();
    const std::string_view alt = std::string_view(accept).substr(start, end - start);
    start = end + 1;
    if (alt.find("as=Table") == std::string_view::npos) {
      if (alt.find("json") != std::string_view::npos || alt.find("*/*") != std::string_view::npos) {
        return out;
      }
      continue;
    }
    if (alt.find("g=meta.k8s.io") == std::string_view::npos) continue;
    if (alt.find("v=v1beta1") != std::string_view::npos) {
      out.table = true;
      out.apiVersion = "meta.k8s.io/v1beta1";
      return out;
    }
    if (alt.find("v=v1") != std::string_view::npos) {
      out.table = true;
      return out;
    }
  }
  return out;
}

std::string watchEventLine(const char* type, json object, const std::vector<TableColumn>* columns,
                           bool headers, const std::string& tableApiVersion, std::int64_t momentNs,
                           std::int64_t recordedNs) {
  // Go's metadata.annotations: a map, absent or null when empty.
  if (object.contains("metadata") && object["metadata"].is_object()) {
    json& annotations = object["metadata"]["annotations"];
    if (!annotations.is_object()) annotations = json::object();
    annotations[kRecordedAtAnnotation] = formatRfc3339(recordedNs);
  }
  json event = {{"type", type}};
  if (columns == nullptr) {
    event["object"] = object;
  } else {
    const std::string version =
        evalJsonPath(object, ".metadata.resourceVersion").is_string()
            ? evalJsonPath(object, ".metadata.resourceVersion").get<std::string>()
            : std::string();
    json table = {{"kind", "Table"},
                  {"apiVersion", tableApiVersion},
                  {"metadata", {{"resourceVersion", version}}},
                  {"rows", {tableRow(*columns, object, momentNs, "", tableApiVersion)}}};
    if (headers) table["columnDefinitions"] = columnDefinitions(*columns);
    event["object"] = std::move(table);
  }
  return event.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

namespace {

// /at/{TIME}, /version, /api, /apis and their group versions.
ApiResponse discoveryResponse(const std::vector<std::string>& seg, ServeContext& ctx) {
  const std::size_t n = seg.size() - 2;
  if (n == 0) {
    throw ApiError::notFound("ask /at/" + seg[1] + "/api or /at/" + seg[1] +
                             "/apis: the moment alone is not a resource");
  }
  if (n == 1 && seg[2] == "version") {
    return ApiResponse::ofJson(json{
        {"major", "1"},
        {"minor", "32"},
        {"gitVersion", "v1.32.0-quota-ledger"},
        {"platform",
         "linux/amd64"}}.dump());
  }
  if (n == 1 && seg[2] == "api") return ApiResponse::ofJson(ctx.catalog.apiVersionsJson());
  if (n == 1 && seg[2] == "apis") return ApiResponse::ofJson(ctx.catalog.apiGroupListJson());
  if ((n == 2 && seg[2] == "api") || (n == 3 && seg[2] == "apis")) {
    const std::string group = seg[2] == "api" ? "" : seg[3];
    const std::string version = seg.back();
    std::string body = ctx.catalog.resourceListJson(group, version);
    if (body.empty()) {
      throw ApiError::notFound("the ledger holds no objects of group version " +
                               (group.empty() ? version : group + "/" + version));
    }
    return ApiResponse::ofJson(std::move(body));
  }
  if (n == 2 && seg[2] == "apis") {
    throw ApiError::notFound("ask /apis/" + seg[3] + "/{version}: see /apis for the versions");
  }
  throw ApiError::notFound("path /" + seg[2] + " is not served");
}

// A watch (?watch=true or /watch/): the plan the server streams from, and
// without a resourceVersion the objects at the moment first, as ADDED.
ApiResponse watchResponse(const ApiRequest& req, const ServeContext& ctx, const ApiResource* r,
                          const ResourcePath& p, const TableRequest& table, const Moment& moment,
                          Listed& listed, const std::vector<TableColumn>& columns) {
  if (r->ledgerOwn) {
    throw ApiError::badRequest(qualified(*r) +
                               " is computed at a moment and has no recorded changes to watch");
  }
  ApiResponse res;
  // As the API server marks a watch; it also keeps cpp-httplib from
  // gzipping the stream, which would hold events back until a block fills.
  res.contentType = "application/json;stream=watch";
  WatchPlan plan;
  plan.group = r->group;
  plan.version = r->version;
  plan.kind = r->kind;
  plan.ns = p.ns;
  plan.labelSelector = req.param("labelSelector").value_or("");
  plan.fieldSelector = req.param("fieldSelector").value_or("");
  if (!p.name.empty()) plan.fieldSelector = "metadata.name=" + p.name;
  plan.table = table.table;
  plan.tableApiVersion = table.apiVersion;
  plan.momentNs = moment.timeNs;
  plan.afterSeq = moment.seq;
  if (auto t = req.param("timeoutSeconds"))
    plan.timeoutSeconds = static_cast<std::int64_t>(parseLimit(*t));
  const std::string rv = req.param("resourceVersion").value_or("");
  if (!rv.empty() && rv != "0") {
    std::uint64_t from = 0;
    auto [end, ec] = std::from_chars(rv.data(), rv.data() + rv.size(), from);
    if (ec != std::errc() || end != rv.data() + rv.size()) {
      throw ApiError::badRequest("resourceVersion '" + rv + "' is not a ledger seq");
    }
    if (from > ctx.ledger.lastSeq()) {
      throw ApiError::badRequest("resourceVersion " + rv + " is past the ledger's end (seq " +
                                 std::to_string(ctx.ledger.lastSeq()) + ")");
    }
    plan.afterSeq = from;
  } else {
    // No version: the objects at the moment first, as synthetic ADDED events.
    bool headers = true;
    const auto withRecorded = watchColumns(columns);
    for (std::size_t i = 0; i < listed.items.size(); ++i) {
      res.body +=
          watchEventLine("ADDED", std::move(listed.items[i]), table.table ? &withRecorded : nullptr,
                         headers, table.apiVersion, moment.timeNs, listed.recordedNs[i]);
      headers = false;
    }
    plan.headersSent = !headers;
  }
  res.watch = plan;
  return res;
}

}  // namespace

bool isDiscoveryPath(const std::string& path) {
  const auto seg = splitPath(path);
  if (seg.size() < 2 || seg[0] != "at") return false;
  const std::size_t n = seg.size() - 2;
  return n <= 1 || (seg[2] == "api" && n == 2) || (seg[2] == "apis" && n <= 3);
}

ApiResponse handleKubeRequest(const ApiRequest& req, ServeContext& ctx) {
  const auto seg = splitPath(req.path);
  if (seg.size() < 2 || seg[0] != "at") {
    throw ApiError::notFound("the API is served under /at/{TIME}/ (RFC 3339, seq:N or now)");
  }
  if (req.method != "GET" && req.method != "HEAD") {
    throw ApiError::methodNotAllowed("the ledger is read-only: " + req.method + " is not allowed");
  }
  const std::size_t n = seg.size() - 2;
  // The paths that name no object (/version, /api, /apis and their group
  // versions) are the same at every moment: the catalog. kubectl asks them
  // before anything and cannot print their refusal (client-go's discovery
  // reads the raw body, so a 400 became five "the server rejected our request
  // for an unknown reason" lines): they are answered whatever the moment
  // says, and the request that names objects refuses a bad moment with the
  // Status kubectl prints ("Error from server (BadRequest): ...").
  if (isDiscoveryPath(req.path)) return discoveryResponse(seg, ctx);
  const Moment moment = resolveMoment(seg[1], ctx.ledger, ctx.nowNs);
  if (!((seg[2] == "api" && n >= 3) || (seg[2] == "apis" && n >= 4))) {
    throw ApiError::notFound("path " + req.path + " is not served");
  }
  const ResourcePath p = parseResourcePath(seg, 2);
  const ApiResource* r = ctx.catalog.find(p.group, p.version, p.plural);
  if (r == nullptr) {
    throw ApiError::notFound("the server could not find the requested resource: " + p.plural +
                             " in " + (p.group.empty() ? p.version : p.group + "/" + p.version));
  }
  if (!r->namespaced && !p.ns.empty()) {
    throw ApiError::notFound(qualified(*r) + " is cluster-scoped: ask without /namespaces/");
  }
  const TableRequest table = wantsTable(req.accept);
  const std::string includeObject = req.param("includeObject").value_or("Metadata");
  if (includeObject != "Metadata" && includeObject != "Object" && includeObject != "None") {
    throw ApiError::badRequest("unrecognized includeObject value: \"" + includeObject + "\"");
  }
  const bool watch = p.watchPrefix || req.param("watch").value_or("") == "true" ||
                     req.param("watch").value_or("") == "1";

  Listed listed = listItems(*r, moment, ctx, p.ns, p.name, req);
  const std::string version = objectVersion(*r, listed.items);
  const auto columns = tableColumns(*r, version);

  if (watch) return watchResponse(req, ctx, r, p, table, moment, listed, columns);

  if (!p.name.empty()) {
    if (listed.items.empty()) {
      json status = json::parse(
          statusJson(ApiError::notFound(qualified(*r) + " \"" + p.name + "\" not found")));
      status["details"] = {{"name", p.name}, {"group", r->group}, {"kind", r->plural}};
      ApiResponse res;
      res.status = 404;
      // The name is the client's bytes: never fail on invalid UTF-8.
      res.body = status.dump(-1, ' ', false, json::error_handler_t::replace);
      return res;
    }
    if (!table.table)
      return ApiResponse::ofJson(
          listed.items.front().dump(-1, ' ', false, json::error_handler_t::replace));
  }
  json metadata = {{"resourceVersion", std::to_string(moment.seq)}};
  if (!listed.continueValue.empty()) {
    metadata["continue"] = listed.continueValue;
    metadata["remainingItemCount"] = listed.remaining;
  }
  json body;
  if (table.table) {
    json rows = json::array();
    for (const auto& object : listed.items) {
      rows.push_back(tableRow(columns, object, moment.timeNs, includeObject, table.apiVersion));
    }
    body = {{"kind", "Table"},
            {"apiVersion", table.apiVersion},
            {"metadata", metadata},
            {"columnDefinitions", columnDefinitions(columns)},
            {"rows", std::move(rows)}};
  } else {
    body = {{"kind", r->kind + "List"},
            {"apiVersion", r->groupVersion()},
            {"metadata", metadata},
            {"items", std::move(listed.items)}};
  }
  return ApiResponse::ofJson(body.dump(-1, ' ', false, json::error_handler_t::replace));
}

}  // namespace ledger::serve
