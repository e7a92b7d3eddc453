#include "tools/bench/end_to_end.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include "ledger/ledger.h"
#include "replay/fold/replayer.h"
#include "schema/k8s/rfc3339.h"

extern char** environ;

namespace ledger::bench {

namespace {

constexpr std::int64_t kHourNs = 3600LL * 1000 * 1000 * 1000;
constexpr std::int64_t kDayNs = 24 * kHourNs;

// The workload first in key order in the state at `seq`; "" when none.
std::string firstWorkload(const replay::Replayer& replayer, std::uint64_t seq) {
  const replay::ClusterState state = replayer.foldTo(seq);
  const auto& workloads = state.objects(replay::ObjectKind::kWorkload);
  if (workloads.empty()) return {};
  const replay::StoredObject& w = *workloads.begin()->second;
  return std::string(w.ns()) + "/" + std::string(w.name());
}

// Runs `argv` to its exit with stdin and stdout on /dev/null; *seconds is
// the time from just before the start to just after the exit. Returns the
// exit status (waitpid's) and the end of its stderr in *err.
int runTimed(const std::vector<std::string>& argv, double* seconds, std::string* err) {
  int pipeFds[2];
  if (::pipe2(pipeFds, O_CLOEXEC) != 0)
    throw std::runtime_error("pipe: " + std::string(strerror(errno)));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipeFds[1], STDERR_FILENO);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const double start = nowSeconds();
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipeFds[1]);
  if (rc != 0) {
    ::close(pipeFds[0]);
    throw std::runtime_error("cannot start " + argv[0] + ": " + strerror(rc));
  }
  std::string text;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(pipeFds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > 8192) text.erase(0, text.size() - 4096);  // the end says why
  }
  ::close(pipeFds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  *seconds = nowSeconds() - start;
  *err = std::move(text);
  return status;
}

}  // namespace

Metrics factsPhase(const std::string& dir) {
  Ledger::Options o;
  o.createIfMissing = false;
  o.readOnly = true;
  std::unique_ptr<Ledger> ledger;
  if (Status st = Ledger::open(dir, o, &ledger); !st.isOk())
    throw std::runtime_error(st.toString());
  if (ledger->lastSeq() == 0) throw std::runtime_error("the ledger at " + dir + " is empty");
  std::int64_t first = 0;
  if (Status st = ledger->timeOf(1, &first); !st.isOk()) throw std::runtime_error(st.toString());
  const replay::Replayer replayer(*ledger);
  // A workload alive halfway through the history, whose records span both
  // sides of it; else one alive at the end.
  std::string workload = firstWorkload(replayer, ledger->lastSeq() / 2 + 1);
  if (workload.empty()) workload = firstWorkload(replayer, ledger->lastSeq());
  // As text: a double would round nanoseconds since 1970.
  phaseText("firstNs", std::to_string(first));
  phaseText("lastNs", std::to_string(ledger->lastTimeNs()));
  phaseText("workload", workload);
  return {{"records", static_cast<double>(ledger->lastSeq())}};
}

LedgerFacts factsFrom(const PhaseOutcome& outcome) {
  LedgerFacts facts;
  auto number = [&](const char* key) -> std::int64_t {
    auto it = outcome.texts.find(key);
    return it == outcome.texts.end() ? 0 : std::stoll(it->second);
  };
  facts.firstNs = number("firstNs");
  facts.lastNs = number("lastNs");
  if (auto it = outcome.texts.find("workload"); it != outcome.texts.end())
    facts.workload = it->second;
  return facts;
}

std::vector<EndToEndQuestion> endToEndQuestions(const LedgerFacts& f) {
  const std::int64_t middle = f.firstNs + (f.lastNs - f.firstNs) / 2;
  const std::string mid = formatRfc3339(middle);
  const std::string first = formatRfc3339(f.firstNs);
  const std::string last = formatRfc3339(f.lastNs);
  const std::string dayBefore = formatRfc3339(std::max(f.firstNs, middle - kDayNs));
  // On the hour, as a dashboard asks, and within the history.
  const std::int64_t lastHour = f.lastNs / kHourNs * kHourNs;
  const std::string thirtyDaysBefore =
      formatRfc3339(std::max(f.firstNs / kHourNs * kHourNs, lastHour - 30 * kDayNs));
  std::vector<EndToEndQuestion> q;
  if (!f.workload.empty()) {
    q.push_back({"`ledger-query workload NS/NAME` (a workload alive halfway)",
                 "workload",
                 {"workload", f.workload, "-o", "json"},
                 100,
                 0.1});
  }
  q.push_back({"`ledger-query report` over the whole history",
               "report all",
               {"report", "--from", first, "--to", last, "-o", "json"},
               200,
               0.1});
  q.push_back({"`ledger-query report` over the whole history, from the log (`--no-checkpoints`)",
               "report all, log",
               {"report", "--from", first, "--to", last, "--no-checkpoints", "-o", "json"},
               std::nullopt,
               std::nullopt});
  q.push_back({"`ledger-query report` over one day (up to halfway)",
               "report day",
               {"report", "--from", dayBefore, "--to", mid, "-o", "json"},
               200,
               std::nullopt});
  q.push_back({"`ledger-query report` over one hour (halfway, off the hour)",
               "report hour",
               {"report", "--from", formatRfc3339(middle - kHourNs), "--to", mid, "-o", "json"},
               200,
               std::nullopt});
  q.push_back({"`ledger-query usage --step 1h` over 30 days (up to the end)",
               "series",
               {"usage", "--step", "1h", "--from", thirtyDaysBefore, "--to", last, "-o", "json"},
               200,
               std::nullopt});
  q.push_back({"`ledger-query state --at T` (T halfway)",
               "state",
               {"state", "--at", mid, "-o", "json"},
               100,
               0.1});
  q.push_back({"`ledger-query usage --at T`",
               "usage",
               {"usage", "--at", mid, "-o", "json"},
               100,
               std::nullopt});
  return q;
}

std::string findLedgerQuery() {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  for (const fs::path& dir : {self.parent_path(), self.parent_path().parent_path()}) {
    const fs::path candidate = dir / "ledger-query";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return {};
}

EndToEndAnswer askEndToEnd(const std::string& program, const std::string& dir,
                           const EndToEndQuestion& question, int runs) {
  EndToEndAnswer answer;
  answer.question = question;
  if (program.empty()) {
    answer.error = "no ledger-query beside ledger-bench (build it in the same build directory)";
    return answer;
  }
  std::vector<std::string> argv{program};
  argv.insert(argv.end(), question.args.begin(), question.args.end());
  argv.push_back("--ledger");
  argv.push_back(dir);
  std::vector<double> ms;
  try {
    for (int i = 0; i <= runs; ++i) {
      double seconds = 0;
      std::string err;
      const int status = runTimed(argv, &seconds, &err);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        answer.error = (WIFEXITED(status) ? "exit code " + std::to_string(WEXITSTATUS(status))
                                          : std::string("killed by a signal")) +
                       (err.empty() ? "" : ": " + err);
        std::replace(answer.error.begin(), answer.error.end(), '\n', ' ');
        return answer;
      }
      if (i > 0) ms.push_back(seconds * 1000);  // the first fills the page cache
    }
  } catch (const std::exception& e) {
    answer.error = e.what();
    return answer;
  }
  std::sort(ms.begin(), ms.end());
  answer.ok = !ms.empty();
  answer.runs = static_cast<int>(ms.size());
  if (answer.ok) {
    answer.medianMs = ms[ms.size() / 2];
    answer.minMs = ms.front();
    answer.maxMs = ms.back();
  }
  return answer;
}

}  // namespace ledger::bench
