// libFuzzer target for `ledger-query serve`'s request handling (tools/serve/
// kube_api.h, ledger_api.h) over the demo ledger: the input is a request as
// its lines - method, path, query string (k=v&k=v), Accept header. Any
// answer or ApiError is fine; anything else thrown, a crash, a leak or a hang
// is a bug.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "ingest/ingester.h"
#include "ingest/stream_ingest.h"
#include "tools/serve/api_error.h"
#include "tools/serve/kube_api.h"
#include "tools/serve/ledger_api.h"
#include "tools/serve_command.h"

namespace {

using namespace ledger;

struct Demo {
  std::string dir;
  std::unique_ptr<Ledger> ledger;
  std::unique_ptr<serve::ResourceCatalog> catalog;
  serve::StateCache states;
  serve::QueryRunner query = cli::answerQuery;
  serve::AnswerCache answers{64, 64ULL << 20};

  Demo() {
    dir = (std::filesystem::temp_directory_path() / ("serve-fuzz-" + std::to_string(::getpid())))
              .string();
    std::filesystem::remove_all(dir);
    Ledger::Options options;
    options.sync = false;
    if (!Ledger::open(dir, options, &ledger).isOk()) std::abort();
    std::ifstream in(LEDGER_SOURCE_DIR "/tools/demo/cluster-events.jsonl");
    ingest::Ingester ingester(*ledger, ingest::IngestOptions{});
    ingest::ingestStream(in, "fuzz", ingester, ingest::StreamOptions{});
    ingester.flush();
    catalog = std::make_unique<serve::ResourceCatalog>(serve::ResourceCatalog::discover(*ledger));
  }
  ~Demo() {
    ledger.reset();
    std::filesystem::remove_all(dir);
  }
};

std::string nextLine(std::string_view& input) {
  const auto nl = input.find('\n');
  std::string line(input.substr(0, nl));
  input = nl == std::string_view::npos ? std::string_view() : input.substr(nl + 1);
  return line;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Demo demo;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  serve::ApiRequest req;
  req.method = nextLine(input);
  req.path = nextLine(input);
  std::string query = nextLine(input);
  req.accept = nextLine(input);
  std::stringstream params(query);
  for (std::string kv; std::getline(params, kv, '&');) {
    const auto eq = kv.find('=');
    req.query.emplace(kv.substr(0, eq), eq == std::string::npos ? "" : kv.substr(eq + 1));
  }
  serve::ServeContext ctx{*demo.ledger, *demo.catalog, demo.states, demo.query, demo.answers, 0};
  try {
    if (req.path.starts_with("/ledger/v1/")) {
      (void)serve::handleLedgerRequest(req, ctx);
    } else {
      (void)serve::handleKubeRequest(req, ctx);
    }
  } catch (const serve::ApiError&) {
  }
  return 0;
}
