#!/bin/sh
# Runs a test program under umockdev: `run_umockdev.sh TOOL ARGS...` with TOOL umockdev-wrapper
# (the program builds its own testbed with libumockdev) or umockdev-run (devices from --device
# files). Without umockdev the test is skipped (exit 77, ctest's SKIP_RETURN_CODE).
tool=$1
shift
if ! command -v "$tool" >/dev/null 2>&1; then
  echo "SKIPPED: $tool is not installed (Debian package umockdev; deploy/install-deps.sh)"
  exit 77
fi
# umockdev's LD_PRELOAD library comes before an ASan runtime; ASan must not refuse that.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
MCULAB_UNDER_UMOCKDEV=1
export ASAN_OPTIONS MCULAB_UNDER_UMOCKDEV
exec "$tool" "$@"
