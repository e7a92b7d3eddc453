// The web view of `ledger-query serve` (tools/serve/web/: index.html, app.js,
// app.css), built into the binary by tools/serve/embed_web_assets.py so the
// server needs no files beside it and the page works offline.
//
// Paths: "/" is index.html; every other file is "/assets/NAME". The assets are
// constants of the program: every pointer and string_view returned refers to
// static storage that lives as long as the program and never changes, so the
// functions are safe to call from any thread at any time, with no
// initialization. Nothing is owned by the caller; nothing is to be freed.
#pragma once

#include <span>
#include <string_view>

namespace ledger::serve {

struct WebAsset {
  std::string_view path;         // "/" or "/assets/NAME"
  std::string_view contentType;  // for the Content-Type header, e.g. "text/html; charset=utf-8"
  std::string_view body;         // the file's bytes
};

// The asset served at `path` (the request's path, without its query); nullptr
// when there is none.
const WebAsset* findWebAsset(std::string_view path);

// Every asset, ordered by file name.
std::span<const WebAsset> webAssets();

}  // namespace ledger::serve
