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

}  // namespace ledger
