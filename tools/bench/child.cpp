#include "tools/bench/child.h"

#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>

namespace ledger::bench {

namespace {

// What the body handed back with phaseText, as protocol lines.
std::string& pendingTexts() {
  static std::string texts;
  return texts;
}

void writeAll(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

[[noreturn]] void childMain(int fd, const std::function<Metrics()>& body) {
  int code = 0;
  std::string out;
  try {
    for (const auto& [key, value] : body()) {
      char buf[64];
      std::snprintf(buf, sizeof buf, " %.17g\n", value);
      out += key + buf;
    }
    out += pendingTexts();
  } catch (const std::exception& e) {
    out = std::string("!error ") + e.what() + "\n";
    code = 1;
  }
  writeAll(fd, out);
  ::close(fd);
  std::fflush(nullptr);
  ::_exit(code);  // no static destructors: they belong to the parent
}

}  // namespace

void phaseText(const std::string& key, const std::string& text) {
  std::string line = "=" + key + " " + text;
  std::replace(line.begin(), line.end(), '\n', ' ');
  pendingTexts() += line + "\n";
}

PhaseOutcome runPhase(const std::function<Metrics()>& body, HugePages pages) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::system_error(errno, std::generic_category(), "pipe");
  std::fflush(nullptr);  // or the child would print the parent's buffered output again
  const pid_t pid = ::fork();
  if (pid < 0) throw std::system_error(errno, std::generic_category(), "fork");
  if (pid == 0) {
    ::close(fds[0]);
    // The kernel then ignores jemalloc's madvise(MADV_HUGEPAGE) in this
    // process: its memory behaves as ledger-ingest's, which is built without
    // the option. Memory touched before the fork keeps its pages.
    if (pages == HugePages::kAsLedgerIngest) ::prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
    childMain(fds[1], body);
  }
  ::close(fds[1]);
  std::string text;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  struct rusage usage {};
  while (::wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  PhaseOutcome out;
  out.maxRssMb = static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux: KB
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("!error ", 0) == 0) {
      out.error = line.substr(7);
      continue;
    }
    if (line.starts_with('=')) {
      const auto space = line.find(' ');
      if (space != std::string::npos) out.texts[line.substr(1, space - 1)] = line.substr(space + 1);
      continue;
    }
    const auto space = line.rfind(' ');
    if (space == std::string::npos) continue;
    out.metrics[line.substr(0, space)] = std::strtod(line.c_str() + space + 1, nullptr);
  }
  out.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!out.ok && out.error.empty()) {
    out.error = WIFSIGNALED(status)
                    ? std::string("killed by signal ") + std::to_string(WTERMSIG(status))
                    : "exit code " + std::to_string(WEXITSTATUS(status));
  }
  return out;
}

double peakRssMb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::strtod(line.c_str() + 6, nullptr) / 1024.0;
  }
  return 0;
}

double cpuSeconds() {
  struct rusage self {};
  ::getrusage(RUSAGE_SELF, &self);
  auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
  };
  return seconds(self.ru_utime) + seconds(self.ru_stime);
}

double nowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace ledger::bench
