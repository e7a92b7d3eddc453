#include "tools/program.h"

#include <kj/exception.h>
#include <spdlog/spdlog.h>

#include <iostream>

#include "ingest/ingester.h"
#include "replay/fold/replayer.h"

namespace ledger::cli {

int exitCodeFor(const Status& status) {
  switch (status.code()) {
    case Status::Code::kOk:
      return kExitOk;
    case Status::Code::kCorruption:
    case Status::Code::kIncompatible:
      return kExitCorrupt;
    case Status::Code::kNotFound:
    case Status::Code::kInvalidArgument:
    case Status::Code::kBusy:
    case Status::Code::kPermissionDenied:
      return kExitUsage;
    case Status::Code::kIoError:
      return kExitLive;
  }
  return kExitLive;
}

int runProgram(const char* program, const std::function<int()>& body) {
  try {
    return body();
  } catch (const UsageError& e) {
    std::cerr << program << ": " << e.what() << "\n";
    return kExitUsage;
  } catch (const ProgramError& e) {
    spdlog::error("{}", e.what());
    return e.code();
  } catch (const ingest::LedgerError& e) {
    spdlog::error("ledger write failed: {}", e.what());
    return exitCodeFor(e.status());
  } catch (const replay::ReplayError& e) {
    spdlog::error("{}", e.what());
    return exitCodeFor(e.status());
  } catch (const kj::Exception& e) {
    // Converted here, on the thread that caught it (replayer.h).
    spdlog::error("{}", replay::damagedObject(e).what());
    return kExitCorrupt;
  } catch (const std::overflow_error& e) {
    // Quantities are exact within schema/k8s/quantity.h's range; a sum past
    // it is not computed rather than wrapped. The state report makes it a
    // QuantityOverflow finding (replay/kueue/audit.h); this is for answers
    // with no finding to attach it to.
    spdlog::error(
        "{}: a quantity the ledger holds is too large to compute with ({}); no answer "
        "was produced",
        program, e.what());
    return kExitInput;
  } catch (const std::exception& e) {
    spdlog::error("{}: internal error: {}", program, e.what());
    return kExitUsage;
  }
}

}  // namespace ledger::cli
