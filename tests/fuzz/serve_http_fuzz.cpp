// libFuzzer target for ledger-serve's HTTP request path
// (tools/serve/server.h): the input is the raw bytes a client sends over one
// connection (request lines, headers, bodies, several requests kept alive),
// sent to a LedgerServer on 127.0.0.1 over the demo ledger; the client then
// closes its sending side, so a request cut short ends at once rather than
// after the read timeout. Any answer, or a closed connection, is fine; a
// crash, a leak, a hang, or a server that no longer answers the next
// connection is a bug. serve_request_fuzz.cpp drives the handlers without
// HTTP.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <spdlog/spdlog.h>

#include "ingest/ingester.h"
#include "ingest/stream_ingest.h"
#include "tools/serve/server.h"
#include "tools/serve_command.h"

namespace {

using namespace ledger;

struct DemoServer {
  std::string dir;
  std::unique_ptr<serve::LedgerServer> server;

  DemoServer() {
    dir =
        (std::filesystem::temp_directory_path() / ("serve-http-fuzz-" + std::to_string(::getpid())))
            .string();
    std::filesystem::remove_all(dir);
    {
      std::unique_ptr<Ledger> ledger;
      Ledger::Options options;
      options.sync = false;
      if (!Ledger::open(dir, options, &ledger).isOk()) std::abort();
      std::ifstream in(LEDGER_SOURCE_DIR "/tools/demo/cluster-events.jsonl");
      ingest::Ingester ingester(*ledger, ingest::IngestOptions{});
      ingest::ingestStream(in, "fuzz", ingester, ingest::StreamOptions{});
      ingester.flush();
    }
    // Every request is logged at info: millions of lines under the fuzzer.
    spdlog::set_level(spdlog::level::warn);
    serve::ServeOptions options;
    options.ledgerDir = dir;
    options.listen = "127.0.0.1:0";
    server = std::make_unique<serve::LedgerServer>(options, cli::answerQuery);
    server->start();
  }
  ~DemoServer() {
    server.reset();
    std::filesystem::remove_all(dir);
  }
};

int connectTo(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) std::abort();
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) std::abort();
  return fd;
}

// Sends `bytes`, closes the sending side and reads until the server closes.
void exchange(int port, const std::uint8_t* bytes, std::size_t size) {
  const int fd = connectTo(port);
  std::size_t sent = 0;
  while (sent < size) {
    const ssize_t n = ::send(fd, bytes + sent, size - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server closed first: fine
    sent += static_cast<std::size_t>(n);
  }
  ::shutdown(fd, SHUT_WR);
  char buf[65536];
  while (::recv(fd, buf, sizeof buf, 0) > 0) {
  }
  ::close(fd);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static DemoServer demo;
  exchange(demo.server->port(), data, size);
  // The server still answers a well-formed request.
  static const std::string kProbe = "GET /ledger/v1/range HTTP/1.1\r\nHost: x\r\n\r\n";
  exchange(demo.server->port(), reinterpret_cast<const std::uint8_t*>(kProbe.data()),
           kProbe.size());
  return 0;
}
