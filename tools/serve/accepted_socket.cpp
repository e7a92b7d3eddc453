#include "tools/serve/accepted_socket.h"

#include <sys/socket.h>

namespace {

thread_local int acceptedSocket = -1;

}  // namespace

namespace ledger::serve {

int takeAcceptedSocket() {
  const int sock = acceptedSocket;
  acceptedSocket = -1;
  return sock;
}

}  // namespace ledger::serve

// accept(2) as glibc declares it for C++, noting the socket (see the header).
extern "C" int accept(int fd, sockaddr* __restrict address, socklen_t* __restrict length) {
  const int sock = ::accept4(fd, address, length, 0);
  acceptedSocket = sock;
  return sock;
}
