#include "ingest/net/listen_address.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>

namespace ledger::net {

std::pair<std::string, int> parseListenAddress(const std::string& address) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos) {
    throw std::invalid_argument("--listen '" + address + "' is not HOST:PORT");
  }
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  // Digits only: std::stoi would also take a sign and leading spaces.
  const std::string portText = address.substr(colon + 1);
  int port = 0;
  const bool digits =
      !portText.empty() && portText.size() <= 5 &&
      std::all_of(portText.begin(), portText.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (digits) port = std::stoi(portText);
  if (!digits || port > 65535) {
    throw std::invalid_argument("--listen '" + address + "': bad port");
  }
  return {host, port};
}

bool isLoopbackHost(const std::string& host) {
  return host == "localhost" || host == "::1" || host == "[::1]" || host.rfind("127.", 0) == 0;
}

namespace {

bool canBind(const char* host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host, std::to_string(port).c_str(), &hints, &found) != 0) return false;
  bool bound = false;
  for (addrinfo* a = found; a != nullptr && !bound; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    bound = ::bind(fd, a->ai_addr, a->ai_addrlen) == 0;
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return bound;
}

}  // namespace

bool canListen(const std::string& host, int port) {
  if (port == 0) return true;
  if (!host.empty()) return canBind(host.c_str(), port);
  return canBind("::", port) || canBind("0.0.0.0", port);
}

}  // namespace ledger::net
