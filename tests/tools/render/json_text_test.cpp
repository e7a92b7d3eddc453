// JSON written as text (tools/render/json_text.h) against nlohmann's dump(2)
// of the same values, and the state report's text against its parse.
#include <catch2/catch.hpp>
#include <fstream>
#include <random>

#include "tests/test_support.h"
#include "tools/render/json_text.h"
#include "tools/render/report_format.h"

using namespace ledger;
using namespace ledger::testing;
using OJ = nlohmann::ordered_json;

namespace {

// A random string: printable ASCII, the characters JSON escapes, other
// control characters, DEL, and multi-byte UTF-8.
std::string randomString(std::mt19937& rng) {
  static const std::vector<std::string> pieces = {"a",
                                                  "Z",
                                                  "0",
                                                  " ",
                                                  "/",
                                                  "\"",
                                                  "\\",
                                                  "\n",
                                                  "\t",
                                                  "\r",
                                                  "\b",
                                                  "\f",
                                                  std::string(1, '\x01'),
                                                  std::string(1, '\x1f'),
                                                  "\x7f",
                                                  "\xc3\xa9",
                                                  "\xe2\x82\xac",
                                                  "\xf0\x9f\x98\x80",
                                                  "{",
                                                  "]"};
  std::string s;
  const int n = static_cast<int>(rng() % 6);
  for (int i = 0; i < n; ++i) s += pieces[rng() % pieces.size()];
  return s;
}

// Builds the same random value both ways.
void randomValue(std::mt19937& rng, int depth, OJ& tree, render::JsonText& text) {
  const unsigned kind = depth > 3 ? rng() % 5 : rng() % 7;
  switch (kind) {
    case 0: {
      const std::string s = randomString(rng);
      tree = s;
      text.string(s);
      break;
    }
    case 1: {
      const auto n = static_cast<std::int64_t>(rng()) - (1LL << 31);
      tree = n;
      text.number(n);
      break;
    }
    case 2: {
      const std::uint64_t n = (static_cast<std::uint64_t>(rng()) << 32) | rng();
      tree = n;
      text.number(n);
      break;
    }
    case 3:
      tree = (rng() & 1) != 0;
      text.boolean(tree.get<bool>());
      break;
    case 4:
      tree = nullptr;
      text.null();
      break;
    case 5: {
      tree = OJ::array();
      text.beginArray();
      const int n = static_cast<int>(rng() % 4);
      for (int i = 0; i < n; ++i) {
        OJ element;
        randomValue(rng, depth + 1, element, text);
        tree.push_back(std::move(element));
      }
      text.endArray();
      break;
    }
    default: {
      tree = OJ::object();
      text.beginObject();
      const int n = static_cast<int>(rng() % 4);
      for (int i = 0; i < n; ++i) {
        const std::string key = randomString(rng) + std::to_string(i);  // distinct keys
        text.key(key);
        OJ member;
        randomValue(rng, depth + 1, member, text);
        tree[key] = std::move(member);
      }
      text.endObject();
      break;
    }
  }
}

}  // namespace

TEST_CASE("JsonText prints what nlohmann's dump(2) prints for the same values", "[render]") {
  std::mt19937 rng(27);
  for (int i = 0; i < 2000; ++i) {
    OJ tree;
    render::JsonText text;
    randomValue(rng, 0, tree, text);
    INFO("value " << i);
    REQUIRE(text.text() == tree.dump(2));
  }
}

TEST_CASE("JsonText: empty containers, and invalid UTF-8 rejected as dump() rejects it",
          "[render]") {
  render::JsonText text;
  text.beginObject();
  text.key("a");
  text.beginArray();
  text.endArray();
  text.key("b");
  text.beginObject();
  text.endObject();
  text.endObject();
  CHECK(text.text() == "{\n  \"a\": [],\n  \"b\": {}\n}");
  render::JsonText bad;
  CHECK_THROWS_AS(bad.string("\xff"), nlohmann::json::type_error);
}

TEST_CASE("the state report's JSON text is nlohmann's dump(2) of its own parse", "[render]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  std::ifstream in(LEDGER_SOURCE_DIR "/tools/demo/cluster-events.jsonl");
  REQUIRE(in);
  ingestText(*ledger, std::string(std::istreambuf_iterator<char>(in), {}));
  for (std::uint64_t seq = 1; seq <= ledger->lastSeq(); ++seq) {
    INFO("seq " << seq);
    const std::string text = render::reportJsonText(reportOf(*ledger, seq));
    CHECK(OJ::parse(text).dump(2) == text);
  }
}
