#!/usr/bin/env bash
# Installs what `headwater-bench all` (and `ssai`) drive: wrk (the load generator), nginx-light (the
# reference server) and util-linux (taskset, to pin servers and wrk to their CPUs). Only what is
# missing is installed (apt-get, non-interactive). Idempotent; then:
#
#   bash Tests/tools/install-bench-tools.sh && swift run -c release headwater-bench all
set -euo pipefail

need=()
command -v wrk >/dev/null 2>&1 || need+=(wrk)
# nginx may be installed outside PATH for non-root users (/usr/sbin).
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need+=(nginx-light)
command -v taskset >/dev/null 2>&1 || need+=(util-linux)
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
