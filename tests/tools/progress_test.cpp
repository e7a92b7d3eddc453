// The progress bar's rules: drawn on stderr only when it is a
// terminal and the work has run for more than a second, redrawn at most
// every 100 ms until the end, erased when done.
#include "tools/progress.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

using ledger::cli::ProgressBar;
using namespace std::chrono_literals;

namespace {

// A file the bar writes to, and a clock the test moves.
struct Screen {
  std::FILE* file = std::tmpfile();
  std::chrono::steady_clock::time_point now{};
  ~Screen() { std::fclose(file); }
  ProgressBar::Clock clock() {
    return [this] { return now; };
  }
  std::string text() {
    std::fflush(file);
    std::string out;
    std::rewind(file);
    char buffer[256];
    std::size_t got;
    while ((got = std::fread(buffer, 1, sizeof buffer, file)) > 0) out.append(buffer, got);
    return out;
  }
};

}  // namespace

TEST_CASE("progress: nothing when stderr is not a terminal", "[progress]") {
  Screen screen;
  {
    ProgressBar bar("replay", screen.file, false, screen.clock());
    screen.now += 5s;
    bar.update(5, 10);
    bar.update(10, 10);
  }
  CHECK(screen.text().empty());
}

TEST_CASE("progress: nothing in the first second, then a bar, erased when done", "[progress]") {
  Screen screen;
  ProgressBar bar("replay", screen.file, true, screen.clock());
  screen.now += 999ms;
  bar.update(5, 10);
  CHECK(screen.text().empty());
  screen.now += 2ms;
  bar.update(5, 10);
  CHECK(screen.text() == "\rreplay [####################....................]  50% 5/10 records");
  bar.done();
  CHECK(screen.text().substr(screen.text().size() - 4) == "\r\033[K");
  // Done twice erases once.
  const std::size_t size = screen.text().size();
  bar.done();
  CHECK(screen.text().size() == size);
}

TEST_CASE("progress: redrawn at most every 100 ms, but always at the end", "[progress]") {
  Screen screen;
  ProgressBar bar("report", screen.file, true, screen.clock());
  screen.now += 2s;
  bar.update(1, 4);
  const std::size_t once = screen.text().size();
  screen.now += 50ms;
  bar.update(2, 4);
  CHECK(screen.text().size() == once);  // too soon
  bar.update(4, 4);
  CHECK(screen.text().size() > once);  // the end is always drawn
  CHECK(screen.text().find("100% 4/4 records") != std::string::npos);
  screen.now += 100ms;
  bar.update(3, 4);
  CHECK(screen.text().find(" 75% 3/4 records") != std::string::npos);
}

TEST_CASE("progress: an unknown total draws nothing", "[progress]") {
  Screen screen;
  ProgressBar bar("query", screen.file, true, screen.clock());
  screen.now += 3s;
  bar.update(7, 0);
  bar.done();
  CHECK(screen.text().empty());
}

TEST_CASE("progress: a count without a total, after a second, with its rate", "[progress]") {
  Screen screen;
  ProgressBar bar("ingest", screen.file, true, screen.clock());
  screen.now += 500ms;
  bar.count(1000);
  CHECK(screen.text().empty());
  screen.now += 1500ms;
  bar.count(4000);
  CHECK(screen.text() == "\ringest 4000 records (2000/s)\033[K");
  screen.now += 50ms;
  bar.count(4100);  // within 100 ms of the last draw
  CHECK(screen.text() == "\ringest 4000 records (2000/s)\033[K");
}
