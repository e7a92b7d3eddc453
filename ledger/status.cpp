#include "ledger/status.h"

namespace ledger {

std::string Status::toString() const {
  const char* name = "OK";
  switch (code_) {
    case Code::kOk:
      return "OK";
    case Code::kNotFound:
      name = "not found";
      break;
    case Code::kCorruption:
      name = "corruption";
      break;
    case Code::kIoError:
      name = "I/O error";
      break;
    case Code::kInvalidArgument:
      name = "invalid argument";
      break;
    case Code::kIncompatible:
      name = "incompatible format";
      break;
    case Code::kBusy:
      name = "busy";
      break;
    case Code::kPermissionDenied:
      name = "permission denied";
      break;
  }
  return std::string(name) + ": " + message_;
}

}  // namespace ledger
