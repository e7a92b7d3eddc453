#include "record.h"

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/exception.h>

#include <cstring>
#include <vector>

#include "log.capnp.h"

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
  key.append(group).push_back('/');
  key.append(kind).push_back('/');
  key.append(namespace_).push_back('/');
  key.append(name);
  return key;
}

namespace {

kj::StringPtr text(const std::string& s) { return kj::StringPtr(s.c_str(), s.size()); }

}  // namespace

std::string encodeRecord(const Record& record) { return encodeRecord(record, record.objectJson); }

std::string encodeRecord(const Record& record, std::string_view objectJson) {
  capnp::MallocMessageBuilder message(1024);
  auto root = message.initRoot<schema::LogRecord>();
  root.setSeq(record.seq);
  root.setType(static_cast<schema::EventType>(record.type));
  root.setTimeNs(record.timeNs);
  auto id = root.initIdentity();
  id.setGroup(text(record.identity.group));
  id.setVersion(text(record.identity.version));
  id.setKind(text(record.identity.kind));
  id.setNamespace(text(record.identity.namespace_));
  id.setName(text(record.identity.name));
  id.setUid(text(record.identity.uid));
  id.setResourceVersion(text(record.identity.resourceVersion));
  root.setObjectJson(capnp::Text::Reader(objectJson.data(), objectJson.size()));
  auto words = capnp::messageToFlatArray(message);
  auto bytes = words.asBytes();
  return std::string(reinterpret_cast<const char*>(bytes.begin()), bytes.size());
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
    auto id = root.getIdentity();
    out->identity.group = id.getGroup().cStr();
    out->identity.version = id.getVersion().cStr();
    out->identity.kind = id.getKind().cStr();
    out->identity.namespace_ = id.getNamespace().cStr();
    out->identity.name = id.getName().cStr();
    out->identity.uid = id.getUid().cStr();
    out->identity.resourceVersion = id.getResourceVersion().cStr();
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

Digest chainHash(const Digest& previous, std::string_view encodedRecord, Sha256& hasher) {
  hasher.update(previous.data(), previous.size());
  hasher.update(encodedRecord);
  return hasher.finish();
}

}  // namespace ledger
