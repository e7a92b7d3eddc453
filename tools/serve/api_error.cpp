#include "tools/serve/api_error.h"

#include <nlohmann/json.hpp>

namespace ledger::serve {

void throwIfFailed(const Status& st) {
  if (st.isOk()) return;
  // The storage layer's InvalidArgument is a request it refuses (a moment
  // before a cut ledger's archive, Ledger::refusedBeforeCut), not a failure.
  if (st.code() == Status::Code::kInvalidArgument) throw ApiError::badRequest(st.message());
  throw ApiError::internal(st.toString());
}

std::string statusJson(const ApiError& error) {
  const nlohmann::json status = {
      {"kind", "Status"},     {"apiVersion", "v1"},      {"metadata", nlohmann::json::object()},
      {"status", "Failure"},  {"message", error.what()}, {"reason", error.reason()},
      {"code", error.code()},
  };
  // The message may quote a client's bytes: never fail on invalid UTF-8.
  return status.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace ledger::serve
