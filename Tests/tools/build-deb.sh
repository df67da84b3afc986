#!/usr/bin/env bash
# Builds a Debian package of Headwater: README.md, "Install with systemd" ("A Debian package").
#
#   bash Tests/tools/build-deb.sh [--binary PATH] [--version V] [--output DIR] [--compression C]
#
#   --binary PATH  the headwater to package (default .build/release/headwater). Build it with
#                  `swift build -c release --static-swift-stdlib` so it runs without the Swift
#                  toolchain; a binary that links /opt/swift is packaged with a warning.
#   --version V    the package version (default: `headwater --version`, a `-` prerelease
#                  suffix written `~` so that 0.1.0~dev sorts before 0.1.0, as Debian wants)
#   --output DIR   where the .deb goes (default .build/deb); prints the path of the .deb
#   --compression C  dpkg-deb's -Z: xz (default, Debian's), gzip (the tests: a minute faster), none
#
# The files are laid out by install-headwater.sh (--prefix /usr), the same script the README's
# install by hand runs: /usr/bin/headwater, /usr/share/headwater/Public, /etc/headwater (conffiles,
# paths pointing at the installed Public/, server.state /var/lib/headwater),
# /lib/systemd/system/headwater.service, /usr/lib/sysusers.d/headwater.conf, the logrotate file
# when systemd/ has one, and LICENSE as /usr/share/doc/headwater/copyright.
#
# The postinst does what the install by hand does after copying: it creates the user, reloads
# systemd and checks the configuration as that user (a failing check is printed, not fatal, so an
# upgrade over an edited config still completes; the unit then fails to start with status 78 and the
# same messages). It neither enables nor starts the service: the tokens in
# /etc/headwater/headwater.env must be set first, then `systemctl enable --now headwater`.
# The maintainer scripts honour DPKG_ROOT (`dpkg --root DIR --force-script-chrootless`).
set -euo pipefail
cd "$(dirname "$0")/../.."
umask 022

binary=.build/release/headwater
version=
output=.build/deb
compression=xz
fail() { echo "build-deb.sh: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary=${2:?--binary needs a path}; shift 2 ;;
    --version) version=${2:?--version needs a version}; shift 2 ;;
    --output) output=${2:?--output needs a directory}; shift 2 ;;
    --compression) compression=${2:?--compression needs xz, gzip or none}; shift 2 ;;
    *) fail "unknown argument '$1' (--binary PATH, --version V, --output DIR, --compression C)" ;;
  esac
done
[ -x "$binary" ] || fail "$binary: no such executable (build it: swift build -c release --static-swift-stdlib)"
for tool in dpkg-deb dpkg ldd strip; do
  command -v "$tool" >/dev/null || fail "$tool is required (dpkg, libc-bin, binutils)"
done
if [ -z "$version" ]; then
  version=$("$binary" --version) || fail "$binary --version failed"
  version=${version//-/\~}
fi
[[ "$version" =~ ^[0-9][A-Za-z0-9.+~]*$ ]] || fail "'$version' is not a Debian version (digits first, then letters, digits, . + ~)"
arch=$(dpkg --print-architecture)

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
chmod 0755 "$stage"
bash Tests/tools/install-headwater.sh --root "$stage" --prefix /usr --binary "$binary" --files-only >/dev/null
install -D -m 0644 LICENSE "$stage/usr/share/doc/headwater/copyright"
# Debian ships binaries without their DWARF debug info (a third of a release binary); the symbol
# table stays, so a crash's backtrace still names functions.
strip --strip-debug "$stage/usr/bin/headwater"

# Depends: the Debian packages of the shared libraries the binary loads (libc6, zlib1g, …), and
# systemd for the unit and systemd-sysusers.
depends=()
toolchain=0
while read -r library; do
  case "$library" in
    /opt/swift/*) toolchain=$((toolchain + 1)); continue ;;
  esac
  owner=$(dpkg -S "$(readlink -f "$library")" 2>/dev/null || dpkg -S "$library" 2>/dev/null) \
    || fail "$library (loaded by $binary) belongs to no Debian package"
  depends+=("${owner%%:*}")
done < <(ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }')
if [ "$toolchain" -gt 0 ]; then
  echo "build-deb.sh: warning: $binary loads $toolchain libraries from the Swift toolchain in /opt/swift: the package runs only where that is installed (build with --static-swift-stdlib)" >&2
fi
depends+=(systemd)
depends_field=$(printf '%s\n' "${depends[@]}" | sort -u | paste -sd, | sed 's/,/, /g')

install -d -m 0755 "$stage/DEBIAN"
(cd "$stage" && find etc -type f | sort | sed 's#^#/#') >"$stage/DEBIAN/conffiles"
cat >"$stage/DEBIAN/control" <<EOF
Package: headwater
Version: $version
Architecture: $arch
Maintainer: ${DEBFULLNAME:-Headwater maintainers} <${DEBEMAIL:-headwater@localhost}>
Installed-Size: $(du -sk --exclude=DEBIAN "$stage" | cut -f1)
Depends: $depends_field
Section: net
Priority: optional
Description: HLS live origin with per-session server-side ad insertion
 Headwater takes live HLS in (push, a watched packager directory, pull or a
 looping demo), serves sliding-window playlists and segments to players and
 CDNs, and stitches ad pods into each viewer's playlist. Runs as the systemd
 service headwater.service, as the system user headwater; not enabled or
 started on install.
EOF

cat >"$stage/DEBIAN/postinst" <<'EOF'
#!/bin/sh
# headwater postinst: what README.md's install does after copying the files.
set -e
if [ "$1" = configure ]; then
    # The service's system user (sysusers.d): created if missing, never changed.
    systemd-sysusers ${DPKG_ROOT:+--root="$DPKG_ROOT"} "$DPKG_ROOT/usr/lib/sysusers.d/headwater.conf"
    if [ -z "$DPKG_ROOT" ]; then
        # Printed, not fatal: an upgrade over an edited config must still complete.
        runuser -u headwater -- /usr/bin/headwater check-config /etc/headwater/headwater.yaml ||
            echo "headwater: /etc/headwater/headwater.yaml does not pass check-config (above): fix it before starting the service" >&2
        if [ -d /run/systemd/system ]; then
            systemctl daemon-reload
        fi
    fi
    # Not enabled or started: set the tokens in /etc/headwater/headwater.env, then
    # `systemctl enable --now headwater`. An upgrade restarts a running service on the new binary.
    if [ -n "$2" ] && [ -z "$DPKG_ROOT" ] && [ -d /run/systemd/system ]; then
        systemctl try-restart headwater.service || true
    fi
fi
exit 0
EOF
cat >"$stage/DEBIAN/prerm" <<'EOF'
#!/bin/sh
# headwater prerm: stop the service before its binary goes away.
set -e
if [ "$1" = remove ] && [ -z "$DPKG_ROOT" ] && [ -d /run/systemd/system ]; then
    systemctl stop headwater.service || true
fi
exit 0
EOF
cat >"$stage/DEBIAN/postrm" <<'EOF'
#!/bin/sh
# headwater postrm: systemd forgets the removed unit. The user and /var/lib/headwater stay (they may
# own pushed segments an operator wants); purge removes /etc/headwater with the conffiles.
set -e
if [ "$1" = remove ] && [ -z "$DPKG_ROOT" ] && [ -d /run/systemd/system ]; then
    systemctl daemon-reload
fi
exit 0
EOF
chmod 0755 "$stage/DEBIAN/postinst" "$stage/DEBIAN/prerm" "$stage/DEBIAN/postrm"

mkdir -p "$output"
deb=$output/headwater_${version}_${arch}.deb
dpkg-deb --build --root-owner-group -Z"$compression" "$stage" "$deb" >/dev/null
echo "$deb"
