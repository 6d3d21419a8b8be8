#!/usr/bin/env bash
# Builds and runs every benchmark in bench/ and writes bench/RESULTS.md: the machine, date, commit
# and command, then one section per benchmark with each figure, its baseline from the same run and
# their ratio. Benchmarks measure; they never fail on a time, only on a crash or an error.
#
#   bench/run.sh                  everything at full size into bench/RESULTS.md (Release build in
#                                 build-bench/, benchmarks on)
#   bench/run.sh --quick          tiny sizes, into BUILD/bench-quick/RESULTS.md: proves every
#                                 benchmark still builds and runs (./tests/run.sh does this)
# Options: --quick, --build-dir DIR (default build-bench; --quick: build), --only NAME[,NAME...],
# --list, --no-build (use what BUILD holds), -j N.
#
# Adding a benchmark: a file bench/run.d/NN-name.sh (sourced in name order) that calls
#   register NAME "Section title" TARGET...      (the CMake targets it needs)
# and defines bench_NAME, called as `bench_NAME OUT WORK`: it appends its markdown fragment to OUT
# (tables, with the baseline and ratio beside each figure) and may keep scratch files in WORK. It
# sees QUICK (1 under --quick), BIN (the build's bin/), ROOT, BUILD and PY (python3), and
# `gbench ARGS` (bench/lib/gbench.py: Google Benchmark JSON to markdown). It runs under set -e: a
# failing command marks the section FAILED and makes run.sh exit 1. Notes written by hand (what
# a profile says a missed figure costs) go in bench/results/notes/NAME.md, appended on full runs.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

QUICK=0
BUILD=""
only=""
list=0
build_it=1
jobs=2
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1 ;;
    --build-dir) BUILD="$2"; shift ;;
    --only) only="$2"; shift ;;
    --list) list=1 ;;
    --no-build) build_it=0 ;;
    -j) jobs="$2"; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "bench/run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
if [ -z "$BUILD" ]; then
  if [ "$QUICK" = 1 ]; then BUILD=build; else BUILD=build-bench; fi
fi
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
BIN="$BUILD/bin"
PY=python3
export QUICK BIN ROOT BUILD PY

names=()
declare -A titles targets
register() {
  names+=("$1")
  titles[$1]="$2"
  shift 2
  targets[${names[-1]}]="$*"
}
gbench() { "$PY" "$ROOT/bench/lib/gbench.py" "$@"; }
# Google Benchmark flags for the mode: one short repetition under --quick.
gbench_flags() {
  if [ "$QUICK" = 1 ]; then echo "--benchmark_min_time=0.001"; else echo "--benchmark_min_time=0.5"; fi
}
export -f gbench gbench_flags
for f in "$ROOT"/bench/run.d/*.sh; do
  # shellcheck source=/dev/null
  source "$f"
done

if [ "$list" = 1 ]; then
  for n in "${names[@]}"; do printf '%-16s %s (targets: %s)\n' "$n" "${titles[$n]}" "${targets[$n]}"; done
  exit 0
fi
selected=()
for n in "${names[@]}"; do
  if [ -z "$only" ] || [[ ",$only," == *",$n,"* ]]; then selected+=("$n"); fi
done
[ ${#selected[@]} -gt 0 ] || { echo "bench/run.sh: no benchmark matches --only $only" >&2; exit 2; }

step() { printf '\n==== bench: %s (%s)\n' "$*" "$(date +%H:%M:%S)"; }

if [ "$build_it" = 1 ]; then
  step "build in $BUILD"
  if [ ! -f "$BUILD/CMakeCache.txt" ]; then
    cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DMCULAB_BUILD_BENCH=ON >/dev/null
  elif ! grep -q '^MCULAB_BUILD_BENCH:BOOL=ON' "$BUILD/CMakeCache.txt"; then
    cmake -S . -B "$BUILD" -DMCULAB_BUILD_BENCH=ON >/dev/null
  fi
fi
# Targets this build defines (a benchmark whose target is missing, e.g. the gdb board bench without
# the firmware toolchain, is skipped and says so).
# Ninja lists "name: phony", Unix Makefiles "... name".
known=$(cmake --build "$BUILD" --target help 2>/dev/null |
  sed -n -e 's/^\([A-Za-z0-9_.+-]*\):.*/\1/p' -e 's/^\.\.\. \([A-Za-z0-9_.+-]*\).*/\1/p')
has_target() { grep -qx "$1" <<<"$known"; }

if [ "$QUICK" = 1 ]; then out_dir="$BUILD/bench-quick"; else out_dir="$ROOT/bench"; fi
mkdir -p "$out_dir"
work="$BUILD/bench-work"
rm -rf "$work"
mkdir -p "$work"
results="$out_dir/RESULTS.md"
body="$work/body.md"
: >"$body"

status=0
for n in "${selected[@]}"; do
  step "$n: ${titles[$n]}"
  frag="$work/$n.md"
  : >"$frag"
  missing=()
  for t in ${targets[$n]}; do has_target "$t" || missing+=("$t"); done
  if [ ${#missing[@]} -gt 0 ]; then
    printf '\n## %s\n\nSkipped: this build has no target %s.\n' "${titles[$n]}" "${missing[*]}" >>"$body"
    echo "skipped (no target ${missing[*]})"
    continue
  fi
  if [ "$build_it" = 1 ] && [ -n "${targets[$n]}" ]; then
    # shellcheck disable=SC2086
    if ! nice cmake --build "$BUILD" -j "$jobs" --target ${targets[$n]}; then
      printf '\n## %s\n\nFAILED: the build of %s failed.\n' "${titles[$n]}" "${targets[$n]}" >>"$body"
      status=1
      continue
    fi
  fi
  mkdir -p "$work/$n"
  start=$(date +%s)
  set +e
  (set -euo pipefail; "bench_$n" "$frag" "$work/$n")
  rc=$?
  set -e
  if [ "$rc" = 0 ]; then
    printf '\n## %s\n\n' "${titles[$n]}" >>"$body"
    cat "$frag" >>"$body"
    # What the figures mean and, where one misses its target, what a profile says it costs
    # (written by hand from the profiles; full runs only).
    if [ "$QUICK" = 0 ] && [ -f "$ROOT/bench/results/notes/$n.md" ]; then
      echo >>"$body"
      cat "$ROOT/bench/results/notes/$n.md" >>"$body"
    fi
    echo "ok ($(($(date +%s) - start)) s)"
  else
    printf '\n## %s\n\nFAILED (exit %s); what it wrote before failing:\n\n' "${titles[$n]}" "$rc" >>"$body"
    cat "$frag" >>"$body"
    echo "FAILED (exit $rc)" >&2
    status=1
  fi
done

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD 2>/dev/null || commit="$commit (with uncommitted changes)"
{
  echo "# Benchmark results"
  echo
  if [ "$QUICK" = 1 ]; then
    echo "**Quick run (tiny sizes): proves the benchmarks run; its figures mean nothing.**"
    echo
  fi
  echo "- machine: $(uname -srm), $(nproc) CPUs ($cpu), $(awk '/^MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo) RAM"
  echo "- load average when the run ended: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine makes figures pessimistic)"
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "- commit: $commit"
  echo "- command: \`bench/run.sh$([ "$QUICK" = 1 ] && echo " --quick")$([ -n "$only" ] && echo " --only $only")\` (build: ${BUILD#"$ROOT"/}, $(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$BUILD/CMakeCache.txt"))"
  echo
  echo "Each section gives a figure, its baseline or target from the same run, and their ratio."
  cat "$body"
} >"$results"
step "wrote ${results#"$ROOT"/}"
exit "$status"
