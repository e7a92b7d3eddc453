#!/usr/bin/env bash
# Installs what building and testing the ledger needs on Debian 12, only if
# missing. Run as root (or with sudo available).
set -euo pipefail
packages=(
  build-essential meson ninja-build pkg-config python3
  librocksdb-dev capnproto libcapnp-dev nlohmann-json3-dev libspdlog-dev
  libboost-program-options-dev catch2 libssl-dev libyaml-cpp-dev libcurl4-openssl-dev libpugixml-dev libcpp-httplib-dev
  libsimdjson-dev libjemalloc-dev libxxhash-dev libre2-dev
  prometheus python3-yaml
  chromium  # the web view's browser test (tests/serve/web_view_test.py)
  nats-server libnats-dev  # the fleet: NATS JetStream server in tests, C client
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q --no-install-recommends "${missing[@]}"
  # The tests need only promtool from Debian's prometheus package (it checks
  # the exposition and the alert rules); the server it also installs is not
  # left running on a machine where this script put it.
  if [[ " ${missing[*]} " == *" prometheus "* ]] && [ -d /run/systemd/system ]; then
    $sudo_cmd systemctl disable --now prometheus >/dev/null 2>&1 || true
  fi
  # Likewise nats-server: the fleet tests start their own servers on free
  # ports (tests/fleet/nats_cluster.py), not the packaged service on 4222.
  if [[ " ${missing[*]} " == *" nats-server "* ]] && [ -d /run/systemd/system ]; then
    $sudo_cmd systemctl disable --now nats-server >/dev/null 2>&1 || true
  fi
fi
