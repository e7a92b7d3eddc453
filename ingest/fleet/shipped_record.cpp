#include "ingest/fleet/shipped_record.h"

#include <charconv>

#include "ingest/fleet/fleet_error.h"

namespace ledger::fleet {

namespace {

template <typename Int>
bool parseDecimal(std::string_view text, Int* out) {
  if (text.empty() || text.size() > 20) return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end;
}

constexpr std::string_view kSubjectPrefix = "ledger.";
constexpr std::string_view kSubjectSuffix = ".records";

}  // namespace

bool isClusterName(std::string_view name) {
  // RFC 1123 label, as Kubernetes names namespaces: one subject token (no
  // '.', '*' or '>') and a directory name that cannot climb ("..").
  if (name.empty() || name.size() > 63) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return name.front() != '-' && name.back() != '-';
}

void checkClusterName(std::string_view name, const char* flag) {
  if (!isClusterName(name)) {
    throw FleetError(FleetError::Kind::kConfig,
                     std::string(flag) + " '" + std::string(name) +
                         "' is not a cluster name: lowercase letters, digits and '-', at most "
                         "63, starting and ending with a letter or digit");
  }
}

std::string recordSubject(std::string_view cluster) {
  return std::string(kSubjectPrefix) + std::string(cluster) + std::string(kSubjectSuffix);
}

std::string messageId(std::string_view cluster, std::uint64_t seq) {
  return std::string(cluster) + ":" + std::to_string(seq);
}

std::string hashedMessageId(std::string_view cluster, std::uint64_t seq, const Digest& hash) {
  return messageId(cluster, seq) + ":" + toHex(hash);
}

std::optional<std::string_view> subjectClusterToken(std::string_view subject) {
  if (subject.size() <= kSubjectPrefix.size() + kSubjectSuffix.size() ||
      !subject.starts_with(kSubjectPrefix) || !subject.ends_with(kSubjectSuffix)) {
    return std::nullopt;
  }
  return subject.substr(kSubjectPrefix.size(),
                        subject.size() - kSubjectPrefix.size() - kSubjectSuffix.size());
}

bool decodeShippedRecord(std::string_view subject, const HeaderLookup& header,
                         std::string_view payload, ShippedRecord* out, std::string* error) {
  *out = ShippedRecord{};
  const auto token = subjectClusterToken(subject);
  if (!token) {
    *error = "subject '" + std::string(subject) + "' is not ledger.<cluster>.records";
    return false;
  }
  const std::string_view cluster = *token;
  if (!isClusterName(cluster)) {
    *error = "subject '" + std::string(subject) + "' does not name a cluster";
    return false;
  }
  out->cluster = std::string(cluster);
  const auto clusterHeader = header(kHeaderCluster);
  if (!clusterHeader || *clusterHeader != cluster) {
    *error = std::string(kHeaderCluster) + " header does not match the subject's cluster";
    return false;
  }
  const auto seqText = header(kHeaderSeq);
  if (!seqText || !parseDecimal(*seqText, &out->seq) || out->seq == 0) {
    *error = std::string(kHeaderSeq) + " header is missing or not a positive number";
    return false;
  }
  const auto id = header(kHeaderMsgId);
  const std::string plainId = messageId(cluster, out->seq);
  // The hashed form's hash is checked once the chain hash is read.
  if (!id || (*id != plainId && !id->starts_with(plainId + ":"))) {
    *error = std::string(kHeaderMsgId) + " header is not " + plainId;
    return false;
  }
  const auto timeText = header(kHeaderTime);
  if (!timeText || !parseDecimal(*timeText, &out->timeNs)) {
    *error = std::string(kHeaderTime) + " header is missing or not a number of ns";
    return false;
  }
  const auto hashText = header(kHeaderChainHash);
  const std::optional<Digest> hash = hashText ? digestFromHex(*hashText) : std::nullopt;
  if (!hash) {
    *error = std::string(kHeaderChainHash) + " header is missing or not 64 hex digits";
    return false;
  }
  out->chainHash = *hash;
  if (*id != plainId && *id != hashedMessageId(cluster, out->seq, *hash)) {
    *error = std::string(kHeaderMsgId) + " header is not " + plainId + " nor " + plainId +
             ":<its chain hash>";
    return false;
  }
  if (const auto sig = header(kHeaderSignature)) {
    out->signature = signatureFromText(*sig);
    if (!out->signature) {
      *error = std::string(kHeaderSignature) + " header is not 64 bytes in base64";
      return false;
    }
  }
  if (Status st = decodeRecord(payload, &out->record); !st.isOk()) {
    *error = "payload is not a ledger record: " + st.message();
    return false;
  }
  if (out->record.seq != out->seq || out->record.timeNs != out->timeNs) {
    *error = "payload's seq or time differs from its headers";
    return false;
  }
  out->bytes = payload;
  return true;
}

}  // namespace ledger::fleet
