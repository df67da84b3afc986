#!/usr/bin/env bash
# Installs what `headwater-bench all` (and `ssai`) drive: wrk (the HTTP/1.1 load generator),
# nghttp2-client (h2load, the HTTP/2 one), nginx-light (the reference server; Debian 12's is 1.22,
# with the ssl and http2 modules), util-linux (taskset, to pin servers and clients to their CPUs),
# openssl (the TLS rows' certificate), gcc and libssl-dev (`cc -O2` builds the floor server,
# Tests/tools/floor-server.c, and the full-handshake client, Tests/tools/tls-handshake-client.c).
# Only what is missing is installed (apt-get, non-interactive).
# Idempotent; then:
#
#   bash Tests/tools/install-bench-tools.sh && swift run -c release headwater-bench all
set -euo pipefail

need=()
command -v wrk >/dev/null 2>&1 || need+=(wrk)
# nginx may be installed outside PATH for non-root users (/usr/sbin).
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need+=(nginx-light)
command -v taskset >/dev/null 2>&1 || need+=(util-linux)
command -v h2load >/dev/null 2>&1 || need+=(nghttp2-client)
command -v openssl >/dev/null 2>&1 || need+=(openssl)
command -v cc >/dev/null 2>&1 || need+=(gcc libc6-dev)
[ -f /usr/include/openssl/ssl.h ] || need+=(libssl-dev)
if [ ${#need[@]} -gt 0 ]; then
  echo "== installing: ${need[*]}"
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  # The package's own nginx service is not needed (and would hold port 80): the bench starts its own.
  if [[ " ${need[*]} " == *" nginx-light "* ]] && command -v systemctl >/dev/null 2>&1; then
    "${sudo[@]}" systemctl disable --now nginx >/dev/null 2>&1 || true
  fi
fi
echo "wrk: $(command -v wrk)  nginx: $(command -v nginx || echo /usr/sbin/nginx)  taskset: $(command -v taskset)"
echo "h2load: $(command -v h2load)  openssl: $(command -v openssl)  cc: $(command -v cc)"
