#include "tools/serve_command.h"

#include <csignal>
#include <sstream>
#include <thread>

#include "tools/cli.h"
#include "tools/fleet_query.h"
#include "tools/query/why_command.h"
#include "tools/query_commands.h"
#include "tools/serve/api_error.h"

namespace ledger::cli {

namespace {

volatile std::sig_atomic_t stopRequested = 0;

void onSignal(int) { stopRequested = 1; }

}  // namespace

std::string answerQuery(const Ledger& ledger, const serve::QueryRequest& q) {
  QueryArgs args;
  args.output = OutputFormat::kJson;
  // Serve answers, with the proof in every answer and a Warning header
  // while the newest verification failed (server.h).
  args.failedVerification = FailedVerification::kQuiet;
  args.seq = q.seq;
  args.target = q.target;
  try {
    const LedgerEnd end = lastRecordEnd([&]() -> const Ledger& { return ledger; });
    if (!q.from.empty()) args.from = parseTimeArg(q.from, "from", TimeBeyondRange::kReject, end);
    if (!q.to.empty()) args.to = parseTimeArg(q.to, "to", TimeBeyondRange::kReject, end);
    if (!q.by.empty()) args.by = q.by;
    if (!q.step.empty()) {
      args.stepText = q.step;
      args.stepNs = parseStepArg(q.step, "step");
    }
    if (!q.clusterQueue.empty()) args.clusterQueue = q.clusterQueue;
    std::ostringstream out;
    runQuery(ledger, q.command, args, out);
    return out.str();
  } catch (const UnknownWorkload& e) {
    throw serve::ApiError::notFound(e.what());
  } catch (const UsageError& e) {
    throw serve::ApiError::badRequest(e.what());
  }
}

int runServe(serve::ServeOptions options) {
  if (!options.fleetDir.empty()) {
    // The copies as `ledger-query --fleet` finds them; a DIR that is not a
    // directory is bad usage before anything listens.
    fleetClusters(options.fleetDir);
    options.fleetCopies = [dir = options.fleetDir] { return fleetClusters(dir); };
    options.copySigned = [](const Ledger& copy) { return copySignatureOf(copy).has_value(); };
  }
  serve::LedgerServer server(std::move(options), answerQuery);
  try {
    server.start();
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  } catch (const std::runtime_error& e) {
    throw ProgramError(e.what(), kExitUsage);
  }
  std::signal(SIGINT, onSignal);
  std::signal(SIGTERM, onSignal);
  while (!stopRequested) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  server.stop();
  return 0;
}

}  // namespace ledger::cli
