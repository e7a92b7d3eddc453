// The addresses the programs' HTTP servers listen on (the --watch daemon's
// health server, `ledger-query serve`) and the hosts they treat as this
// machine's own. Apart from the Kubernetes client so that a program serving
// HTTP does not link libcurl with it.
//
// Functions only; thread-safe. parseListenAddress throws
// std::invalid_argument naming --listen.
#pragma once

#include <string>
#include <utility>

namespace ledger::net {

// "HOST:PORT", "[V6]:PORT" or ":PORT" (every interface) -> (host without
// brackets, port 0-65535). Throws std::invalid_argument for anything else.
std::pair<std::string, int> parseListenAddress(const std::string& address);

// 127.0.0.0/8, ::1 or localhost: a host only this machine reaches.
bool isLoopbackHost(const std::string& host);

// Whether a TCP socket could listen on (host, port) now, as the daemon's
// health server binds (SO_REUSEADDR, no SO_REUSEPORT; an empty host: "::",
// else "0.0.0.0"): a probe made before anything is created, so that a
// daemon whose address another process holds stops before it creates its
// ledger. Port 0 always can. A host that does not resolve cannot.
bool canListen(const std::string& host, int port);

}  // namespace ledger::net
