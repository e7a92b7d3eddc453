// The web view built into the binary (tools/serve/web_assets.h): the page at
// "/", its script and style and the fleet's overview under /assets/, each
// with its content type, and nothing else.
#include "tools/serve/web_assets.h"

#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <string_view>

using ledger::serve::findWebAsset;
using ledger::serve::WebAsset;

TEST_CASE("the web view's page is served at /", "[serve]") {
  const WebAsset* index = findWebAsset("/");
  REQUIRE(index != nullptr);
  CHECK(index->path == "/");
  CHECK(index->contentType == "text/html; charset=utf-8");
  CHECK(index->body.starts_with("<!DOCTYPE html>"));
  // It names its script and style by the paths they are served at, and
  // nothing from outside (the page works offline).
  CHECK(index->body.find("/assets/app.js") != std::string_view::npos);
  CHECK(index->body.find("/assets/app.css") != std::string_view::npos);
  CHECK(index->body.find("http://") == std::string_view::npos);
  CHECK(index->body.find("https://") == std::string_view::npos);
  // The body is the whole file, up to its closing tag.
  CHECK(index->body.find("</html>") != std::string_view::npos);
}

TEST_CASE("the web view's script and style carry their content types", "[serve]") {
  const WebAsset* script = findWebAsset("/assets/app.js");
  REQUIRE(script != nullptr);
  CHECK(script->contentType == "text/javascript; charset=utf-8");
  CHECK(script->body.find("/ledger/v1") != std::string_view::npos);

  const WebAsset* style = findWebAsset("/assets/app.css");
  REQUIRE(style != nullptr);
  CHECK(style->contentType == "text/css; charset=utf-8");
  CHECK_FALSE(style->body.empty());
}

TEST_CASE("an unknown path is no web asset", "[serve]") {
  CHECK(findWebAsset("") == nullptr);
  CHECK(findWebAsset("/index.html") == nullptr);
  CHECK(findWebAsset("/assets/") == nullptr);
  CHECK(findWebAsset("/assets/missing.js") == nullptr);
  CHECK(findWebAsset("/app.js") == nullptr);
  CHECK(findWebAsset("/ledger/v1/range") == nullptr);
  CHECK(findWebAsset("/assets/app.js?v=1") == nullptr);
}

TEST_CASE("every web asset is found at its own path", "[serve]") {
  std::set<std::string> paths;
  for (const WebAsset& asset : ledger::serve::webAssets()) {
    INFO(asset.path);
    CHECK(findWebAsset(asset.path) == &asset);
    CHECK_FALSE(asset.body.empty());
    CHECK_FALSE(asset.contentType.empty());
    paths.insert(std::string(asset.path));
  }
  CHECK(paths == std::set<std::string>{"/", "/assets/app.css", "/assets/app.js",
                                       "/assets/fleet.html", "/assets/fleet.js"});
}

TEST_CASE("the fleet's overview page names its script and the clusters' JSON", "[serve]") {
  // `serve --fleet` answers / with this page (tools/serve/fleet_paths.h).
  const WebAsset* page = findWebAsset("/assets/fleet.html");
  REQUIRE(page != nullptr);
  CHECK(page->contentType == "text/html; charset=utf-8");
  CHECK(page->body.find("/assets/fleet.js") != std::string_view::npos);
  CHECK(page->body.find("http://") == std::string_view::npos);
  const WebAsset* script = findWebAsset("/assets/fleet.js");
  REQUIRE(script != nullptr);
  CHECK(script->body.find("/ledger/v1/clusters") != std::string_view::npos);
}
