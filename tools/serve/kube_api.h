// A read-only Kubernetes API over the ledger at a chosen moment: requests
// under /at/{TIME}/ (moment.h) answered as the API server would have
// answered them then, so stock kubectl works against it unmodified.
//
// Served: /version; discovery (/api, /apis, /api/v1, /apis/{g}/{v}); list
// and get of every stored kind and of the ledger's own (ledger_api.h),
// cluster-scoped and namespaced, with labelSelector, fieldSelector
// (metadata.name, metadata.namespace), limit and continue; the Table form
// (table_columns.h) when the Accept header asks for it; watch=true, which
// answers the initial events here and leaves the recorded changes after
// the moment to the caller (ApiResponse::watch, watch_stream.h). Any method
// but GET is 405: nothing here can change the ledger.
//
// Thread-safe (reads only). Errors: throws ApiError, each a v1 Status with
// the code the API server would use (400 for a malformed time, selector,
// limit or a continue token of another moment; 404 for an unknown group,
// resource or object).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "tools/serve/api_request.h"
#include "tools/serve/serve_context.h"
#include "tools/serve/table_columns.h"

namespace ledger::serve {

ApiResponse handleKubeRequest(const ApiRequest& request, ServeContext& context);

// Whether `path` is one of the paths that name no object (/at/{TIME},
// /version, /api, /apis and their group versions): kubectl's discovery,
// answered from the catalog whatever the moment says.
bool isDiscoveryPath(const std::string& path);

// What the Accept header asks for: the Table form (and in which version of
// meta.k8s.io), or plain JSON. Throws ApiError (406) for a Table in a
// version that has none.
struct TableRequest {
  bool table = false;
  std::string apiVersion = "meta.k8s.io/v1";
};
TableRequest wantsTable(const std::string& accept);

// One watch event line for `object` ("ADDED", "MODIFIED", "DELETED"): the
// object itself, or a one-row Table (with the column definitions when
// `headers`) when `columns` is given (watchColumns: the row's cells read
// the annotation). The object carries kRecordedAtAnnotation with
// `recordedNs`; AGE counts to `momentNs`.
std::string watchEventLine(const char* type, nlohmann::json object,
                           const std::vector<TableColumn>* columns, bool headers,
                           const std::string& tableApiVersion, std::int64_t momentNs,
                           std::int64_t recordedNs);

}  // namespace ledger::serve
