#include "ingest/net/listen_address.h"

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

}  // namespace ledger::net
