// `ledger-ingest --from` (the real binary, $LEDGER_INGEST) on input built to
// crash or exhaust it, and stopped by SIGTERM: hostile values are rejected
// with their position, the values around them are committed, memory stays
// bounded (each run is held to 2 GiB of address space, so a regression fails
// instead of eating the machine), and an interrupted run says where it
// stopped, exits 4, and is completed by running it again.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <set>
#include <thread>

#include "ledger/verify.h"
#include "tests/test_support.h"

using namespace ledger;
using namespace ledger::testing;

namespace {

struct Run {
  int code = -1;  // exit code, 128 + signal when killed
  std::string out;
  std::string err;
};

// Starts ledger-ingest with `args`, its address space limited to 2 GiB;
// its stdin is `stdinFd` when given, else /dev/null.
pid_t spawn(const std::vector<std::string>& args, const std::string& outFile,
            const std::string& errFile, int stdinFd = -1, int closeInChild = -1) {
  std::vector<std::string> all = {programFromEnv("LEDGER_INGEST")};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
#ifndef __SANITIZE_ADDRESS__
    // AddressSanitizer reserves terabytes of address space for its shadow
    // memory, so an ASan build runs unlimited (its tests run the same code
    // as the normal build's, which is limited).
    const rlimit limit{2ULL << 30, 2ULL << 30};
    setrlimit(RLIMIT_AS, &limit);
#endif
    const int out = ::open(outFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(errFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out, STDOUT_FILENO);
    dup2(err, STDERR_FILENO);
    dup2(stdinFd >= 0 ? stdinFd : ::open("/dev/null", O_RDONLY), STDIN_FILENO);
    if (closeInChild >= 0) ::close(closeInChild);
    execv(argv[0], argv.data());
    _exit(127);
  }
  REQUIRE(pid > 0);
  return pid;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Waits at most `timeout` (then kills it: a hang fails as code -1).
Run finish(pid_t pid, const TempDir& dir, std::chrono::seconds timeout = std::chrono::seconds(60)) {
  Run run;
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (waitpid(pid, &status, WNOHANG) != pid) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return run;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  run.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  run.out = slurp(dir.path("out"));
  run.err = slurp(dir.path("err"));
  return run;
}

Run runIngest(const TempDir& dir, const std::string& input) {
  return finish(spawn({"--ledger", dir.path("ledger"), "--from", input, "--no-sync",
                       "--checkpoint-every", "0"},
                      dir.path("out"), dir.path("err")),
                dir);
}

std::string configMapYaml(const std::string& name) {
  return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name +
         "\n  namespace: ns\n  uid: uid-" + name + "\n  resourceVersion: \"1\"\n";
}

std::string configMapEvent(const std::string& name, int rv) {
  return event("ADDED", {{"apiVersion", "v1"},
                         {"kind", "ConfigMap"},
                         {"metadata", meta("ns", name, "uid-" + name, std::to_string(rv))}});
}

std::vector<std::string> recordedNames(const std::string& ledgerDir) {
  auto ledger = openLedger(ledgerDir);
  VerifyReport v;
  REQUIRE(verifyLog(*ledger, &v).isOk());
  INFO(v.problem);
  REQUIRE(v.ok());
  std::vector<std::string> names;
  REQUIRE(ledger
              ->scanRecords(1, 0,
                            [&](const Record& r, const Digest&) {
                              names.push_back(r.identity.name);
                              return true;
                            })
              .isOk());
  return names;
}

}  // namespace

TEST_CASE("a YAML alias bomb is rejected at its alias; the documents around it are committed",
          "[crash][limits]") {
  TempDir dir;
  // 1.1 KB that expands to 10^9 nodes: nine levels of ten aliases.
  std::string bomb =
      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol, namespace: ns}\n"
      "data:\n  a0: &a0 [\"lol\"]\n";
  for (int i = 1; i <= 9; ++i) {
    bomb += "  a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) bomb += (j ? ", *a" : "*a") + std::to_string(i - 1);
    bomb += "]\n";
  }
  const std::string input = dir.path("bomb.yaml");
  std::ofstream(input) << configMapYaml("before") << "---\n"
                       << bomb << "---\n"
                       << configMapYaml("after");
  const auto started = std::chrono::steady_clock::now();
  const Run run = runIngest(dir, input);
  INFO(run.err);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(20));
  CHECK(run.code == 2);
  // The document starts at line 9, byte 113; its line 17 holds the level
  // whose aliases pass go-yaml's ratio.
  CHECK(run.err.find(":9 (byte 113): rejected: invalid YAML at line 17, column 12: document "
                     "contains excessive aliasing") != std::string::npos);
  CHECK(recordedNames(dir.path("ledger")) == std::vector<std::string>{"before", "after"});
}

TEST_CASE("JSON nested 100k deep is rejected with its line; the values around it are committed",
          "[crash][limits]") {
  TempDir dir;
  const std::string input = dir.path("deep.jsonl");
  {
    std::ofstream out(input);
    out << configMapEvent("before", 1);
    // Deep in the object, as a hostile API server or a broken exporter
    // would send it: every recursive step after parsing overflowed.
    out << R"({"type":"ADDED","object":{"apiVersion":"v1","kind":"ConfigMap",)"
        << R"("metadata":{"name":"deep","namespace":"ns","uid":"d","resourceVersion":"2"},)"
        << R"("data":)" << std::string(100000, '[') << std::string(100000, ']') << "}}\n";
    out << "{\"a\":\n" << std::string(100000, '{') << "\n";  // and deep, cut short
    out << configMapEvent("after", 3);
  }
  const Run run = runIngest(dir, input);
  INFO(run.err);
  CHECK(run.code == 2);
  CHECK(run.err.find(":2 (byte ") != std::string::npos);
  CHECK(run.err.find("rejected: JSON nested deeper than 1000 levels at line 2") !=
        std::string::npos);
  CHECK(recordedNames(dir.path("ledger")) == std::vector<std::string>{"before", "after"});
}

// Writes all of `text` to `fd`. A child that died closes the pipe: that is
// a failure to report, not a SIGPIPE to end the test process with.
void writeAll(int fd, std::string_view text) {
  ::signal(SIGPIPE, SIG_IGN);
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n <= 0) FAIL("the pipe to ledger-ingest closed");
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

TEST_CASE(
    "SIGTERM mid-ingest commits what was read, says where it stopped, exits 4; a re-run "
    "completes it exactly once",
    "[crash][limits]") {
  TempDir dir;
  constexpr int kEvents = 60000;
  std::vector<std::string> lines;
  for (int i = 0; i < kEvents; ++i)
    lines.push_back(configMapEvent("cm-" + std::to_string(i), i + 1));
  const std::string ledgerDir = dir.path("ledger");
  // A generated stream on stdin, as `kubectl get -w ... | ledger-ingest
  // --from -` gives it: a third of it arrives, then the writer goes quiet
  // (the pipe stays open) and the ingest is stopped. Deterministic where a
  // file raced the signal: the run is stopped with input certainly left.
  int pipeFds[2];
  REQUIRE(::pipe(pipeFds) == 0);
  const pid_t pid = spawn({"--ledger", ledgerDir, "--from", "-", "--batch", "100", "-o", "json",
                           "--checkpoint-every", "0"},
                          dir.path("out"), dir.path("err"), pipeFds[0], pipeFds[1]);
  ::close(pipeFds[0]);
  std::string sent;
  for (int i = 0; i < kEvents / 3; ++i) sent += lines[static_cast<std::size_t>(i)];
  writeAll(pipeFds[1], sent);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  REQUIRE(kill(pid, SIGTERM) == 0);
  const Run run = finish(pid, dir, std::chrono::seconds(20));
  ::close(pipeFds[1]);
  INFO(run.err);
  CHECK(run.code == 4);
  const Json summary = Json::parse(run.out, nullptr, false);
  REQUIRE(summary.is_object());
  CHECK(summary["interrupted"] == true);
  const auto values = summary["values"].get<std::size_t>();
  CHECK(values > 0);
  CHECK(values <= static_cast<std::size_t>(kEvents / 3));
  CHECK(summary["recorded"] == values);
  // The cursor: just past the last value read (its newline not yet).
  std::size_t cursor = 0;
  for (std::size_t i = 0; i < values; ++i) cursor += lines[i].size();
  --cursor;
  CHECK(run.err.find("stdin: interrupted by SIGTERM after " + std::to_string(values) + " values (" +
                     std::to_string(cursor) +
                     " bytes); everything read is "
                     "committed and the source's cursor stands at byte " +
                     std::to_string(cursor)) != std::string::npos);
  CHECK(recordedNames(ledgerDir).size() == values);

  // The same command on the whole stream completes it, each event once.
  REQUIRE(::pipe(pipeFds) == 0);
  const pid_t again = spawn({"--ledger", ledgerDir, "--from", "-", "--batch", "1000",
                             "--checkpoint-every", "0", "--no-sync"},
                            dir.path("out"), dir.path("err"), pipeFds[0], pipeFds[1]);
  ::close(pipeFds[0]);
  for (const std::string& line : lines) writeAll(pipeFds[1], line);
  ::close(pipeFds[1]);
  const Run rerun = finish(again, dir);
  INFO(rerun.err);
  CHECK(rerun.code == 0);
  const auto names = recordedNames(ledgerDir);
  CHECK(names.size() == static_cast<std::size_t>(kEvents));
  CHECK(std::set<std::string>(names.begin(), names.end()).size() ==
        static_cast<std::size_t>(kEvents));
}
