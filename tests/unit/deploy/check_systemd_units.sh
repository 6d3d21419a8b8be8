#!/usr/bin/env bash
# Checks deploy/systemd/*.service with `systemd-analyze verify` (in a scratch root holding the
# system's own units and stand-ins for the binaries, so ExecStart= resolves without installing
# mculab), fails on any warning it prints, and checks the settings a lab owner relies on.
# Exit 77 (ctest: skipped) when systemd-analyze is missing.
set -euo pipefail
units_dir=$1
scratch=$2
if ! command -v systemd-analyze >/dev/null 2>&1; then
  echo "SKIPPED: systemd-analyze is not installed (Debian package systemd): units not verified"
  exit 77
fi
rm -rf "$scratch"
mkdir -p "$scratch/etc/systemd/system" "$scratch/usr/lib/systemd" "$scratch/usr/local/bin"
if [ -d /usr/lib/systemd/system ]; then
  cp -a /usr/lib/systemd/system "$scratch/usr/lib/systemd/"
fi
status=0
for unit in "$units_dir"/*.service; do
  name=$(basename "$unit")
  cp "$unit" "$scratch/etc/systemd/system/"
  exe=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$unit")
  mkdir -p "$scratch$(dirname "$exe")"
  printf '#!/bin/sh\n' >"$scratch$exe"
  chmod +x "$scratch$exe"
  out=$(systemd-analyze verify --root="$scratch" --man=no "$scratch/etc/systemd/system/$name" 2>&1) ||
    { echo "$name: systemd-analyze verify failed:"; echo "$out"; status=1; continue; }
  if [ -n "$out" ]; then
    echo "$name: systemd-analyze verify warned:"; echo "$out"; status=1
  fi
  for want in '^User=mculab-' '^StateDirectory=' '^Restart=on-failure$' '^ProtectSystem=strict$' \
              '^PrivateTmp=yes$' '^NoNewPrivileges=yes$'; do
    if ! grep -q "$want" "$unit"; then
      echo "$name: no line matching $want"; status=1
    fi
  done
  [ $status -eq 0 ] && echo "$name: verified"
done
exit $status
