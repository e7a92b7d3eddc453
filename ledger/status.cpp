#include "ledger/status.h"

#include <cerrno>
#include <cstring>

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

bool Status::isNoSpace() const {
  // RocksDB's NoSpace status and std::error_code both carry strerror's text,
  // and the ledger's statuses keep the text they were made from.
  return code_ == Code::kIoError && message_.find(std::strerror(ENOSPC)) != std::string::npos;
}

}  // namespace ledger
