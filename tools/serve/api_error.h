// The serve layer's one error type: what went wrong with a request, said
// the way the Kubernetes API server says it (a v1 Status with an HTTP code
// and a reason), so kubectl prints it as it prints any API error.
//
// Every request handler in tools/serve throws ApiError for a request it
// cannot answer; server.cpp turns it into the response, and anything else
// thrown into a 500 InternalError. Value type.
#pragma once

#include <stdexcept>
#include <string>

#include "ledger/status.h"

namespace ledger::serve {

class ApiError : public std::runtime_error {
 public:
  ApiError(int code, std::string reason, const std::string& message)
      : std::runtime_error(message), code_(code), reason_(std::move(reason)) {}
  int code() const { return code_; }
  // metav1.StatusReason: "BadRequest", "NotFound", "MethodNotAllowed", ...
  const std::string& reason() const { return reason_; }

  static ApiError badRequest(const std::string& m) { return {400, "BadRequest", m}; }
  static ApiError unauthorized(const std::string& m) { return {401, "Unauthorized", m}; }
  static ApiError notFound(const std::string& m) { return {404, "NotFound", m}; }
  static ApiError methodNotAllowed(const std::string& m) { return {405, "MethodNotAllowed", m}; }
  static ApiError notAcceptable(const std::string& m) { return {406, "NotAcceptable", m}; }
  static ApiError internal(const std::string& m) { return {500, "InternalError", m}; }

 private:
  int code_;
  std::string reason_;
};

// A storage status that is not OK, as a 500 InternalError: the ledger
// failing under a request is the server's fault, not the client's. An
// InvalidArgument is the ledger refusing the request (a moment before a cut
// ledger's archive): a 400 BadRequest with the ledger's message.
void throwIfFailed(const Status& st);

// The error as a v1 Status object (JSON).
std::string statusJson(const ApiError& error);

}  // namespace ledger::serve
