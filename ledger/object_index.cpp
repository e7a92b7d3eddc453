#include "ledger/object_index.h"

#include "ledger/format.h"

namespace ledger {

namespace {

std::string_view view(capnp::Text::Reader t) { return std::string_view(t.cStr(), t.size()); }

}  // namespace

void appendReferrerKeys(std::string_view ns, std::string_view objectKey,
                        const schema::Projection::Reader& projection,
                        std::vector<std::string>& out) {
  for (auto o : projection.getOwnerReferences()) {
    if (o.getUid().size() > 0) out.push_back(format::referrerKey(ns, view(o.getUid()), objectKey));
  }
  auto body = projection.getBody();
  if (body.isResourceClaim()) {
    for (auto r : body.getResourceClaim().getReservedFor()) {
      if (r.getUid().size() > 0)
        out.push_back(format::referrerKey(ns, view(r.getUid()), objectKey));
    }
  }
}

void appendObjectIndexKeys(std::string_view ns, std::string_view objectKey, std::uint64_t seq,
                           const schema::Projection::Reader* projection,
                           std::vector<std::string>& out) {
  out.push_back(format::objectRecordKey(objectKey, seq));
  if (projection != nullptr) appendReferrerKeys(ns, objectKey, *projection, out);
}

void appendObjectIndexKeys(std::uint64_t seq, schema::ProjectedRecord::Reader record,
                           std::vector<std::string>& out) {
  auto id = record.getIdentity();
  std::string key;
  key.append(view(id.getGroup())).push_back('/');
  key.append(view(id.getKind())).push_back('/');
  key.append(view(id.getNamespace())).push_back('/');
  key.append(view(id.getName()));
  const auto projection = record.getObject();
  appendObjectIndexKeys(view(id.getNamespace()), key, seq, &projection, out);
}

void appendLaterRecordSeqs(std::string& out, std::uint64_t first,
                           std::span<const std::uint64_t> later) {
  std::uint64_t previous = first;
  for (const std::uint64_t seq : later) {
    std::uint64_t delta = seq - previous;
    previous = seq;
    while (delta >= 0x80) {
      out.push_back(static_cast<char>((delta & 0x7F) | 0x80));
      delta >>= 7;
    }
    out.push_back(static_cast<char>(delta));
  }
}

bool parseRecordEntryKey(std::string_view key, std::string_view* objectKey, std::uint64_t* first) {
  constexpr std::size_t kTail = 1 + 8;  // '\0' and the seq
  if (key.size() < 1 + kTail || key[0] != 'r' || key[key.size() - kTail] != '\0') return false;
  *objectKey = key.substr(1, key.size() - 1 - kTail);
  *first = format::decodeU64(key.substr(key.size() - 8));
  return true;
}

bool decodeRecordEntry(std::uint64_t first, std::string_view value,
                       std::vector<std::uint64_t>& seqs) {
  const std::size_t before = seqs.size();
  seqs.push_back(first);
  std::uint64_t seq = first;
  std::size_t i = 0;
  while (i < value.size()) {
    std::uint64_t delta = 0;
    int shift = 0;
    bool more = true;
    while (more) {
      // Ten bytes hold 64 bits; the tenth may carry only the top bit.
      if (i == value.size() || shift > 63 ||
          (shift == 63 && (static_cast<std::uint8_t>(value[i]) & 0x7E) != 0)) {
        seqs.resize(before);
        return false;
      }
      const auto byte = static_cast<std::uint8_t>(value[i++]);
      delta |= static_cast<std::uint64_t>(byte & 0x7F) << shift;
      shift += 7;
      more = (byte & 0x80) != 0;
    }
    if (delta == 0 || delta > UINT64_MAX - seq) {
      seqs.resize(before);
      return false;
    }
    seq += delta;
    seqs.push_back(seq);
  }
  return true;
}

}  // namespace ledger
