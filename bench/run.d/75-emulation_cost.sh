# What the emulated boards cost (bench/emulation_cost.py): wall time per emulated instruction of
# one MobileNetV2 inference on the emulated M55 and M7, with icount and the counting plugin (a job
# with --events), icount alone (the lab's default) and neither. --quick: MobileNetV2 at 96x96 and
# width 0.35, which proves the bench runs.
register emulation_cost "Emulated boards: wall time per emulated instruction (MobileNetV2)" \
  mculab-tflite-writer mculab_qemu_counters
bench_emulation_cost() {
  local out=$1
  local size=()
  if [ "$QUICK" = 1 ]; then size=(--resolution 96 --alpha 0.35); fi
  if ! command -v qemu-system-arm >/dev/null; then
    echo "Skipped: no qemu-system-arm." >>"$out"
    return 0
  fi
  "$PY" "$ROOT/bench/emulation_cost.py" "$BIN" "$BUILD/firmware" \
    "$BUILD/lib/libmculab-qemu-counters.so" "${size[@]}" >>"$out"
}
