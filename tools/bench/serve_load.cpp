#include "tools/bench/serve_load.h"

#include <fcntl.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "tools/bench/bench_report.h"
#include "tools/bench/end_to_end.h"

namespace ledger::bench {

namespace {

int freePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    throw std::runtime_error("cannot find a free loopback port");
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

// The server as a child process, stopped (SIGTERM) when this goes.
class ServeChild {
 public:
  ServeChild(const std::string& program, const std::string& dir, int port) {
    const std::string listen = "127.0.0.1:" + std::to_string(port);
    pid_ = ::fork();
    if (pid_ == 0) {
      // Its log line per request would drown the table.
      const int null = ::open("/dev/null", O_WRONLY);
      if (null >= 0) ::dup2(null, 2);
      ::execl(program.c_str(), program.c_str(), "--ledger", dir.c_str(), "--log-format", "json",
              "serve", "--listen", listen.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    if (pid_ < 0) throw std::runtime_error("cannot start " + program);
  }
  ~ServeChild() {
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  ServeChild(const ServeChild&) = delete;
  ServeChild& operator=(const ServeChild&) = delete;

 private:
  pid_t pid_;
};

}  // namespace

bool runServeLoad(const ServeLoadOptions& options, std::ostream& out) {
  const std::string program = findLedgerQuery();
  if (program.empty()) throw std::runtime_error("no ledger-query beside ledger-bench");
  const int port = freePort();
  ServeChild child(program, options.ledgerDir, port);
  httplib::Client probe("127.0.0.1", port);
  nlohmann::json range;
  for (int i = 0; i < 600; ++i) {
    if (auto res = probe.Get("/ledger/v1/range"); res && res->status == 200) {
      range = nlohmann::json::parse(res->body);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (range.is_null()) throw std::runtime_error("ledger-query serve did not answer");
  const std::uint64_t last = range["lastSeq"];
  const std::vector<std::string> lists = {"/apis/kueue.x-k8s.io/v1beta2/workloads", "/api/v1/pods",
                                          "/apis/kueue.x-k8s.io/v1beta2/clusterqueues",
                                          "/apis/quota-ledger.io/v1alpha1/queueusages"};
  const httplib::Headers table = {
      {"Accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"},
      {"Accept-Encoding", "gzip"}};  // as kubectl asks
  std::mt19937_64 rng(options.seed);
  std::vector<double> cold, warm;
  int failures = 0;
  std::size_t bytes = 0;
  for (int m = 0; m < options.moments; ++m) {
    const std::uint64_t seq = last / 2 + rng() % (last / 2 + 1);
    for (int round = 0; round < 2; ++round) {
      std::vector<double> ms(static_cast<std::size_t>(options.clients));
      std::vector<int> failed(static_cast<std::size_t>(options.clients));
      std::vector<std::size_t> got(static_cast<std::size_t>(options.clients));
      std::barrier start(options.clients);
      std::vector<std::thread> threads;
      for (int c = 0; c < options.clients; ++c) {
        threads.emplace_back([&, c] {
          httplib::Client client("127.0.0.1", port);
          client.set_read_timeout(300, 0);
          const std::string path =
              "/at/seq:" + std::to_string(seq) + lists[static_cast<std::size_t>(c) % lists.size()];
          start.arrive_and_wait();
          const auto t0 = std::chrono::steady_clock::now();
          auto res = client.Get(path, table);
          ms[static_cast<std::size_t>(c)] =
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                  .count();
          failed[static_cast<std::size_t>(c)] = !res || res->status != 200;
          got[static_cast<std::size_t>(c)] = res ? res->body.size() : 0;
        });
      }
      for (auto& t : threads) t.join();
      for (int c = 0; c < options.clients; ++c) {
        failures += failed[static_cast<std::size_t>(c)];
        bytes += got[static_cast<std::size_t>(c)];
      }
      (round == 0 ? cold : warm).insert((round == 0 ? cold : warm).end(), ms.begin(), ms.end());
    }
  }
  out << "\n### `ledger-query serve` under load (" << options.clients
      << " concurrent list requests from loopback, " << last << " records)\n\n"
      << "| round | requests | p50 ms | p99 ms | max ms |\n|---|---|---|---|---|\n"
      << std::fixed << std::setprecision(1);
  const auto row = [&](const char* what, const std::vector<double>& v) {
    out << "| " << what << " | " << v.size() << " | " << percentile(v, 0.5) << " | "
        << percentile(v, 0.99) << " | " << percentile(v, 1.0) << " |\n";
  };
  row("at a moment not asked before (the state there is folded)", cold);
  row("at the same moment again", warm);
  std::vector<double> all = cold;
  all.insert(all.end(), warm.begin(), warm.end());
  row("all", all);
  out << "\nEach request: the Table form of Workloads (all namespaces), Pods, ClusterQueues or "
         "QueueUsages, in turn; "
      << bytes / std::max<std::size_t>(1, all.size()) << " bytes per answer on average; "
      << failures << " failed.\n";
  return failures == 0;
}

}  // namespace ledger::bench
