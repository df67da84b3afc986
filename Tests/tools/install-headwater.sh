#!/usr/bin/env bash
# Installs Headwater from this checkout as a systemd service: README.md, "Install with systemd".
# The README runs it, InstallTests runs it into a scratch root, and build-deb.sh lays the package's
# files out with it, so all three install the same files the same way.
#
#   bash Tests/tools/install-headwater.sh [--root DIR] [--binary PATH] [--prefix DIR] [--files-only]
#
#   --root DIR    install under DIR instead of / (every path prefixed; systemd-sysusers --root).
#                 Under a root, the service is not checked or reloaded: nothing of it runs here.
#   --binary PATH the headwater to install (default .build/release/headwater: `swift build -c release`)
#   --prefix DIR  /usr/local (default: an administrator's install) or /usr (the Debian package)
#   --files-only  lay the files out and stop (build-deb.sh: the package's postinst does the rest)
#
# As root. Files an administrator edits (/etc/headwater/*.yaml, headwater.env) are installed only
# when missing, so running it again to upgrade keeps their changes and secrets. It creates the
# user, checks the installed configuration as that user and reloads systemd; it does not enable
# or start the service: set the tokens in /etc/headwater/headwater.env first.
set -euo pipefail
cd "$(dirname "$0")/../.."

root=/
binary=.build/release/headwater
prefix=/usr/local
files_only=no
fail() { echo "install-headwater.sh: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
  case "$1" in
    --root) root=${2:?--root needs a directory}; shift 2 ;;
    --binary) binary=${2:?--binary needs a path}; shift 2 ;;
    --prefix) prefix=${2:?--prefix needs a directory}; shift 2 ;;
    --files-only) files_only=yes; shift ;;
    *) fail "unknown argument '$1' (--root DIR, --binary PATH, --prefix DIR, --files-only)" ;;
  esac
done
[ -x "$binary" ] || fail "$binary: no such executable (build it first: swift build -c release)"
case "$prefix" in /*) ;; *) fail "--prefix must be absolute: $prefix" ;; esac
root=${root%/}

# Where things go. The package puts the unit and the user where distribution packages do
# (/lib/systemd/system, /usr/lib/sysusers.d); an install by hand puts them where the administrator's
# own files go, which take precedence over a package's.
share=$prefix/share/headwater
if [ "$prefix" = /usr ]; then
  unit_dir=/lib/systemd/system
  sysusers_dir=/usr/lib/sysusers.d
else
  unit_dir=/etc/systemd/system
  sysusers_dir=/etc/sysusers.d
fi
state=/var/lib/headwater
logs=/var/log/headwater

echo "== binary: $prefix/bin/headwater ($("$binary" --version))"
install -D -m 0755 "$binary" "$root$prefix/bin/headwater"

echo "== static files: $share/Public"
install -d "$root$share"
rm -rf "$root$share/Public"
cp -R Public "$root$share/"

# Configuration. Relative paths in it resolve against its own directory (/etc/headwater), so
# `../Public` must become the installed Public/; pushed segments go to the unit's StateDirectory=.
echo "== configuration: /etc/headwater"
install -d -m 0755 "$root/etc/headwater"
for source in Config/*.yaml; do
  target=$root/etc/headwater/$(basename "$source")
  if [ -e "$target" ]; then
    echo "   kept $target (already there)"
    continue
  fi
  sed -e "s#\.\./Public#$share/Public#g" "$source" >"$target.new"
  if [ "$(basename "$source")" = headwater.yaml ] && ! grep -q '^  state:' "$target.new"; then
    sed -i -e "s#^server:\$#server:\n  state: $state#" "$target.new"
    grep -q "^  state: $state\$" "$target.new" || fail "$source: no 'server:' line to add server.state to"
  fi
  # The access log goes to the unit's LogsDirectory= (rotated by logrotate, reopened on SIGUSR1),
  # not to the journal, whose rate limit a busy origin would pass.
  if [ "$(basename "$source")" = headwater.yaml ] && ! grep -q '^  access_log:' "$target.new"; then
    sed -i -e "s#^server:\$#server:\n  access_log: $logs/access.log#" "$target.new"
    grep -q "^  access_log: $logs/access.log\$" "$target.new" || fail "$source: no 'server:' line to add server.access_log to"
  fi
  # Anything else relative that leaves /etc/headwater would point into nothing once installed.
  if grep -n '\.\./' "$target.new" >&2; then
    rm -f "$target.new"
    fail "$source: a relative path outside its directory (above) that this script does not know how to install"
  fi
  chmod 0644 "$target.new"
  mv "$target.new" "$target"
done
# Secrets: read by systemd (EnvironmentFile=) as root before it drops privileges.
if [ -e "$root/etc/headwater/headwater.env" ]; then
  echo "   kept $root/etc/headwater/headwater.env (already there)"
else
  install -m 0640 systemd/headwater.env.example "$root/etc/headwater/headwater.env"
fi

echo "== unit: $unit_dir/headwater.service"
install -d "$root$unit_dir"
# The unit names the /usr/local paths; another prefix rewrites exactly those.
sed -e "s#/usr/local/bin/headwater#$prefix/bin/headwater#g" \
    -e "s#/usr/local/share/headwater#$share#g" systemd/headwater.service >"$root$unit_dir/headwater.service.new"
if [ "$prefix" != /usr/local ] && grep -n '/usr/local' "$root$unit_dir/headwater.service.new" >&2; then
  fail "systemd/headwater.service: a /usr/local path (above) that --prefix $prefix does not rewrite"
fi
chmod 0644 "$root$unit_dir/headwater.service.new"
mv "$root$unit_dir/headwater.service.new" "$root$unit_dir/headwater.service"
install -D -m 0644 systemd/headwater.sysusers "$root$sysusers_dir/headwater.conf"
if [ -f systemd/headwater.logrotate ]; then
  echo "== logrotate: /etc/logrotate.d/headwater"
  install -D -m 0644 systemd/headwater.logrotate "$root/etc/logrotate.d/headwater"
fi

[ "$files_only" = yes ] && exit 0

echo "== user: headwater (systemd-sysusers)"
if [ "$root" = "" ]; then
  systemd-sysusers "$sysusers_dir/headwater.conf"
else
  systemd-sysusers --root="$root" "$root$sysusers_dir/headwater.conf"
fi

if [ "$root" != "" ]; then
  echo "== under --root $root: the configuration is not checked and systemd is not reloaded here"
  exit 0
fi
echo "== check-config, as the service's user"
runuser -u headwater -- "$prefix/bin/headwater" check-config /etc/headwater/headwater.yaml
if [ -d /run/systemd/system ]; then
  systemctl daemon-reload
else
  echo "== systemd is not running: no daemon-reload"
fi
echo "== installed. Set the tokens in /etc/headwater/headwater.env, then: systemctl enable --now headwater"
