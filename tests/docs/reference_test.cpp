// docs/reference.md stays the reference of what the code does: every finding
// type the audit emits has its own heading under "## Findings", and every
// heading there names a type the code emits.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

namespace {

std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  REQUIRE(in);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The first argument of every `finding("Type", ...)` call in the sources.
std::set<std::string> emittedFindingTypes(const std::filesystem::path& root) {
  std::set<std::string> types;
  const std::string call = "finding(\"";
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (entry.path().extension() != ".cpp") continue;
    const std::string text = readFile(entry.path());
    for (auto at = text.find(call); at != std::string::npos; at = text.find(call, at + 1)) {
      const auto begin = at + call.size();
      const auto end = text.find('"', begin);
      if (end != std::string::npos) types.insert(text.substr(begin, end - begin));
    }
  }
  return types;
}

// The `### Type` headings between "## Findings" and the next "## ".
std::set<std::string> documentedFindingTypes(const std::string& reference) {
  std::set<std::string> types;
  const auto start = reference.find("\n## Findings\n");
  REQUIRE(start != std::string::npos);
  const auto end = reference.find("\n## ", start + 1);
  const std::string section = reference.substr(start, end - start);
  for (auto at = section.find("\n### "); at != std::string::npos;
       at = section.find("\n### ", at + 1)) {
    const auto begin = at + 5;
    types.insert(section.substr(begin, section.find('\n', begin) - begin));
  }
  return types;
}

}  // namespace

TEST_CASE("docs/reference.md documents every finding type the audit emits", "[docs]") {
  const std::filesystem::path source(LEDGER_SOURCE_DIR);
  const std::set<std::string> emitted = emittedFindingTypes(source / "replay");
  const std::set<std::string> documented =
      documentedFindingTypes(readFile(source / "docs" / "reference.md"));
  REQUIRE(emitted.size() >= 10);
  for (const auto& type : emitted) {
    INFO("finding type emitted by replay/: " << type);
    CHECK(documented.count(type) == 1);
  }
  for (const auto& type : documented) {
    INFO("finding type documented in docs/reference.md: " << type);
    CHECK(emitted.count(type) == 1);
  }
}
