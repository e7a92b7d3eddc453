// The storage layer's error model: every fallible ledger operation returns a
// Status (or fills an out-parameter and returns one). Statuses are
// [[nodiscard]]: a storage error is never silently dropped.
//
// Value type; thread-compatible.
#pragma once

#include <string>
#include <utility>

namespace ledger {

class [[nodiscard]] Status {
 public:
  enum class Code {
    kOk,
    kNotFound,
    kCorruption,        // stored bytes fail their checks (hash, decoding, gaps)
    kIoError,           // the storage engine failed
    kInvalidArgument,   // the caller asked for something impossible
    kIncompatible,      // the ledger's format is not one this build reads
    kBusy,              // another process holds the ledger
    kPermissionDenied,  // the ledger's files may not be read or written by this user
  };

  Status() = default;
  static Status ok() { return Status(); }
  static Status notFound(std::string msg) { return Status(Code::kNotFound, std::move(msg)); }
  static Status corruption(std::string msg) { return Status(Code::kCorruption, std::move(msg)); }
  static Status ioError(std::string msg) { return Status(Code::kIoError, std::move(msg)); }
  static Status invalidArgument(std::string msg) {
    return Status(Code::kInvalidArgument, std::move(msg));
  }
  static Status incompatible(std::string msg) {
    return Status(Code::kIncompatible, std::move(msg));
  }
  static Status busy(std::string msg) { return Status(Code::kBusy, std::move(msg)); }
  static Status permissionDenied(std::string msg) {
    return Status(Code::kPermissionDenied, std::move(msg));
  }

  bool isOk() const { return code_ == Code::kOk; }
  bool isNotFound() const { return code_ == Code::kNotFound; }
  bool isCorruption() const { return code_ == Code::kCorruption; }
  // An I/O error because the disk is full (ENOSPC; RocksDB's NoSpace says
  // the same words): one that space freed later cures, where other I/O
  // errors are taken as lasting.
  bool isNoSpace() const;
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string toString() const;

 private:
  Status(Code code, std::string msg) : code_(code), message_(std::move(msg)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

}  // namespace ledger
