#!/usr/bin/env bash
# Link launcher for the mculab CLI (cli/CMakeLists.txt, RULE_LAUNCH_LINK): runs the link command
# it is given with gRPC, protobuf, Abseil, RE2, c-ares, upb, zlib and OpenSSL taken from Debian's
# static archives instead of their shared libraries. The CLI then loads a handful of shared objects
# instead of ~58, and the dynamic loader's symbol lookups (most of a dynamically linked CLI's
# start-up) go away. libstdc++, libc and the other libraries stay shared.
#
# Each such shared library on the line (a path to lib<name>.so[.N...]) is dropped; the archives go
# at the end in one --start-group (Abseil's archives depend on each other in cycles), with every
# Abseil archive, since a shared library's own dependencies never appear on the line.
set -euo pipefail
libdir=""
static_re='^lib(grpc|grpc\+\+|gpr|protobuf|absl_[a-z0-9_]+|re2|cares|upb|address_sorting|ssl|crypto|z)\.so(\.[0-9.]+)?$'
args=()
group=()
for a in "$@"; do
  base=${a##*/}
  if [[ "$a" == /* && "$base" =~ $static_re ]]; then
    archive="${a%/*}/${base%%.so*}.a"
    if [ -f "$archive" ]; then
      libdir=${a%/*}
      group+=("$archive")
      continue
    fi
  fi
  args+=("$a")
done
if [ -n "$libdir" ]; then
  for extra in "$libdir"/libabsl_*.a "$libdir"/lib{grpc,gpr,upb,address_sorting,re2,cares,ssl,crypto,z}.a; do
    [ -f "$extra" ] && group+=("$extra")
  done
  args+=(-Wl,--start-group "${group[@]}" -Wl,--end-group -ldl -lpthread -lrt -latomic)
fi
exec "${args[@]}"
