// ScratchMessage against Cap'n Proto's own MallocMessageBuilder and
// messageToFlatArray: the same bytes for messages of one and of several
// segments, whatever the previous message left in the kept first segment.
#include "ledger/scratch_message.h"

#include <capnp/serialize.h>

#include <catch2/catch.hpp>
#include <string>

#include "schema/log.capnp.h"

using namespace ledger;

namespace {

template <typename Fill>
std::string flatArray(std::size_t firstSegmentWords, Fill fill) {
  capnp::MallocMessageBuilder message(static_cast<unsigned>(firstSegmentWords));
  fill(message);
  const auto words = capnp::messageToFlatArray(message);
  const auto bytes = words.asBytes();
  return std::string(reinterpret_cast<const char*>(bytes.begin()), bytes.size());
}

}  // namespace

TEST_CASE("a scratch message gives the bytes of a fresh builder, one after another",
          "[scratch_message]") {
  ScratchMessage scratch(64);  // 512 bytes, so most messages here need more segments
  for (std::size_t size : {0u, 10u, 400u, 600u, 5000u, 3u, 70000u, 1u, 513u}) {
    const std::string name(size, 'n');
    const auto fill = [&](capnp::MessageBuilder& m) {
      auto id = m.initRoot<schema::ObjectIdentity>();
      id.setKind("Pod");
      id.setName(capnp::Text::Reader(name.data(), name.size()));
      id.setUid("0c1d");
    };
    fill(scratch.start());
    const std::string expected = flatArray(64, fill);
    std::string joined;
    for (std::string_view part : scratch.parts()) joined.append(part);
    INFO("name of " << size << " bytes");
    CHECK(scratch.parts().size() >= 2);  // the segment table, then segments
    CHECK(joined == expected);
    CHECK(scratch.bytes() == expected);
  }
}

TEST_CASE("a scratch message with no message started has no parts", "[scratch_message]") {
  ScratchMessage scratch(16);
  CHECK(scratch.parts().empty());
  CHECK(scratch.bytes().empty());
}
