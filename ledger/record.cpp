#include "ledger/record.h"

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/exception.h>

#include <cstring>
#include <vector>

#include "ledger/record_capnp.h"
#include "ledger/scratch_message.h"
#include "schema/log.capnp.h"

namespace ledger {

const char* eventTypeName(EventType type) {
  switch (type) {
    case EventType::kAdded:
      return "ADDED";
    case EventType::kModified:
      return "MODIFIED";
    case EventType::kDeleted:
      return "DELETED";
  }
  return "UNKNOWN";
}

std::string ObjectIdentity::objectKey() const {
  std::string key;
  key.reserve(group.size() + kind.size() + namespace_.size() + name.size() + 3);
  appendObjectKey(key);
  return key;
}

void ObjectIdentity::appendObjectKey(std::string& out) const {
  out.append(group).push_back('/');
  out.append(kind).push_back('/');
  out.append(namespace_).push_back('/');
  out.append(name);
}

namespace {

kj::StringPtr text(const std::string& s) { return kj::StringPtr(s.c_str(), s.size()); }

}  // namespace

std::string encodeRecord(const Record& record) { return encodeRecord(record, record.objectJson); }

void setIdentity(schema::ObjectIdentity::Builder out, const ObjectIdentity& identity) {
  out.setGroup(text(identity.group));
  out.setVersion(text(identity.version));
  out.setKind(text(identity.kind));
  out.setNamespace(text(identity.namespace_));
  out.setName(text(identity.name));
  out.setUid(text(identity.uid));
  out.setResourceVersion(text(identity.resourceVersion));
}

ObjectIdentity readIdentity(schema::ObjectIdentity::Reader in) {
  ObjectIdentity identity;
  identity.group = in.getGroup().cStr();
  identity.version = in.getVersion().cStr();
  identity.kind = in.getKind().cStr();
  identity.namespace_ = in.getNamespace().cStr();
  identity.name = in.getName().cStr();
  identity.uid = in.getUid().cStr();
  identity.resourceVersion = in.getResourceVersion().cStr();
  return identity;
}

void fillLogRecord(schema::LogRecord::Builder out, const Record& header,
                   std::string_view objectJson) {
  out.setSeq(header.seq);
  out.setType(static_cast<schema::EventType>(header.type));
  out.setTimeNs(header.timeNs);
  setIdentity(out.initIdentity(), header.identity);
  out.setObjectJson(capnp::Text::Reader(objectJson.data(), objectJson.size()));
}

// The first segment's size is part of the format in effect: a record whose
// JSON does not fit continues in a second segment, which changes its bytes,
// and equal ingests compare chain hashes. 1024 words, as since format 1.
constexpr std::size_t kFirstSegmentWords = 1024;

RecordEncoder::RecordEncoder() : message_(std::make_unique<ScratchMessage>(kFirstSegmentWords)) {}
RecordEncoder::~RecordEncoder() = default;

std::span<const std::string_view> RecordEncoder::encode(const Record& record,
                                                        std::string_view objectJson) {
  fillLogRecord(message_->start().initRoot<schema::LogRecord>(), record, objectJson);
  return message_->parts();
}

std::string encodeRecord(const Record& record, std::string_view objectJson) {
  ScratchMessage message(kFirstSegmentWords);
  fillLogRecord(message.start().initRoot<schema::LogRecord>(), record, objectJson);
  return message.bytes();
}

Status decodeRecord(std::string_view bytes, Record* out) {
  if (bytes.size() % sizeof(capnp::word) != 0 || bytes.empty()) {
    return Status::corruption("log record is not a whole number of words");
  }
  // Cap'n Proto reads from word-aligned memory; RocksDB gives no alignment.
  std::vector<capnp::word> words(bytes.size() / sizeof(capnp::word));
  std::memcpy(words.data(), bytes.data(), bytes.size());
  try {
    capnp::FlatArrayMessageReader reader(kj::arrayPtr(words.data(), words.size()));
    auto root = reader.getRoot<schema::LogRecord>();
    auto type = static_cast<std::uint16_t>(root.getType());
    if (type > 2) return Status::corruption("log record has unknown event type");
    out->seq = root.getSeq();
    out->type = static_cast<EventType>(type);
    out->timeNs = root.getTimeNs();
    out->identity = readIdentity(root.getIdentity());
    out->objectJson = root.getObjectJson().cStr();
  } catch (const kj::Exception& e) {
    return Status::corruption(std::string("log record does not decode: ") +
                              e.getDescription().cStr());
  }
  return Status::ok();
}

Digest chainHash(const Digest& previous, std::string_view encodedRecord) {
  Sha256 hasher;
  return chainHash(previous, encodedRecord, hasher);
}

Digest chainHash(const Digest& previous, std::span<const std::string_view> encodedParts,
                 Sha256& hasher) {
  hasher.update(previous.data(), previous.size());
  for (std::string_view part : encodedParts) hasher.update(part);
  return hasher.finish();
}

Digest chainHash(const Digest& previous, std::string_view encodedRecord, Sha256& hasher) {
  return chainHash(previous, std::span<const std::string_view>(&encodedRecord, 1), hasher);
}

}  // namespace ledger
