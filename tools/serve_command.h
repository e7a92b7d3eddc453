// ledger-query serve: runs the HTTP server (tools/serve/server.h) on a
// ledger until SIGINT or SIGTERM, answering the ledger's own questions with
// the query commands (query_commands.h).
//
// Throws UsageError for options that would expose the ledger or a bad
// address, ProgramError when the ledger cannot be opened or the address
// bound (program.h maps them to exit codes).
#pragma once

#include "tools/serve/server.h"

namespace ledger::cli {

int runServe(serve::ServeOptions options);

// The serve module's QueryRunner: the query command's JSON, a bad question
// (UsageError) turned into a 400 ApiError.
std::string answerQuery(const Ledger& ledger, const serve::QueryRequest& query);

}  // namespace ledger::cli
