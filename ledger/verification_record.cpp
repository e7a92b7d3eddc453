#include "ledger/verification_record.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <system_error>

#include "ledger/format.h"

namespace ledger {

namespace {

// Names unique to this file: the library is built as one unity source.
Status verificationFileError(const std::string& what, int err) {
  const std::error_code ec(err, std::generic_category());
  if (ec == std::errc::permission_denied || ec == std::errc::operation_not_permitted) {
    return Status::permissionDenied(what + ": " + ec.message());
  }
  return Status::ioError(what + ": " + ec.message());
}

std::string verificationPath(const std::string& dir) {
  return (std::filesystem::path(dir) / format::kVerificationFile).string();
}

// Writes `text` to `path` and makes it durable.
Status writeDurably(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return verificationFileError("writing " + path, errno);
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      ::close(fd);
      return verificationFileError("writing " + path, err);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    return verificationFileError("syncing " + path, err);
  }
  if (::close(fd) != 0) return verificationFileError("closing " + path, errno);
  return Status::ok();
}

// Whether `next` takes the place of `previous` (the rule in the header).
bool replaces(const Verification& next, const Verification& previous) {
  return !(next.ok && next.scope == VerificationScope::kChain && !previous.ok &&
           previous.scope == VerificationScope::kFull);
}

}  // namespace

std::string encodeVerification(const Verification& v) {
  nlohmann::ordered_json j;
  j["format"] = 1;
  j["scope"] = v.scope == VerificationScope::kFull ? "full" : "chain";
  j["timeNs"] = v.timeNs;
  j["upToSeq"] = v.upToSeq;
  j["ok"] = v.ok;
  j["failedSeq"] = v.failedSeq;
  // The problem quotes the ledger's keys and values, which may hold any
  // bytes: replaced, not thrown over, where they are not UTF-8.
  j["problem"] = v.problem;
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

Status decodeVerification(const std::string& text, Verification* out) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  auto bad = [](const std::string& why) { return Status::corruption(why); };
  if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
  if (!j.contains("format") || !j["format"].is_number_unsigned() || j["format"] != 1) {
    return bad("no \"format\": 1 (written by another build?)");
  }
  const auto field = [&](const char* name, bool (nlohmann::json::*is)() const noexcept) {
    return j.contains(name) && (j[name].*is)();
  };
  if (!field("scope", &nlohmann::json::is_string) ||
      (j["scope"] != "full" && j["scope"] != "chain")) {
    return bad("\"scope\" is not \"full\" or \"chain\"");
  }
  for (const char* name : {"upToSeq", "failedSeq"}) {
    if (!field(name, &nlohmann::json::is_number_unsigned)) {
      return bad(std::string("\"") + name + "\" is not a seq");
    }
  }
  if (!field("timeNs", &nlohmann::json::is_number_integer)) return bad("\"timeNs\" is not a time");
  if (!field("ok", &nlohmann::json::is_boolean)) return bad("\"ok\" is not true or false");
  if (!field("problem", &nlohmann::json::is_string)) return bad("\"problem\" is not a string");
  Verification v;
  v.scope = j["scope"] == "full" ? VerificationScope::kFull : VerificationScope::kChain;
  v.timeNs = j["timeNs"].get<std::int64_t>();
  v.upToSeq = j["upToSeq"].get<std::uint64_t>();
  v.ok = j["ok"].get<bool>();
  v.failedSeq = j["failedSeq"].get<std::uint64_t>();
  v.problem = j["problem"].get<std::string>();
  *out = std::move(v);
  return Status::ok();
}

Status readVerification(const std::string& dir, std::optional<Verification>* out) {
  out->reset();
  const std::string path = verificationPath(dir);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return Status::ok();
    return verificationFileError("reading " + path, errno);
  }
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return verificationFileError("reading " + path, errno ? errno : EIO);
  Verification v;
  if (Status st = decodeVerification(text, &v); !st.isOk()) {
    return Status::corruption(path + " is not a verification record (" + st.message() +
                              "); `ledger-replay verify` writes it anew");
  }
  *out = std::move(v);
  return Status::ok();
}

Status recordVerification(const std::string& dir, const Verification& v, bool* replaced) {
  if (replaced != nullptr) *replaced = false;
  const int dirFd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirFd < 0) return verificationFileError("opening " + dir, errno);
  // Released by the close below, on every path.
  struct DirGuard {
    int fd;
    ~DirGuard() { ::close(fd); }
  } guard{dirFd};
  if (::flock(dirFd, LOCK_EX) != 0) return verificationFileError("locking " + dir, errno);
  std::optional<Verification> previous;
  // A damaged record (Corruption) is replaced; one that cannot be read at
  // all is an error, since this record might be the one that must stay.
  if (Status st = readVerification(dir, &previous); !st.isOk() && !st.isCorruption()) return st;
  if (previous && !replaces(v, *previous)) return Status::ok();
  const std::string path = verificationPath(dir);
  const std::string temporary = path + ".tmp";
  if (Status st = writeDurably(temporary, encodeVerification(v)); !st.isOk()) return st;
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    return verificationFileError("renaming " + temporary + " to " + path, errno);
  }
  if (::fsync(dirFd) != 0) return verificationFileError("syncing " + dir, errno);
  if (replaced != nullptr) *replaced = true;
  return Status::ok();
}

}  // namespace ledger
