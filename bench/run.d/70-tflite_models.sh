# Per model and board kind: emulated instructions per inference and per MAC (reference and Helium
# kernels), the planned arena and the runner's flash (bench/models_table.py, QEMU boards). Needs
# the MLPerf Tiny models (../shared/models/mlperf-tiny); each model runs for minutes under QEMU,
# so --quick leaves it to the e2e suite (tests/e2e/test_model_lab.py runs the same models).
register tflite_models "TFLite models: instructions per inference and per MAC, arena, flash" \
  mculab-server mculab-agent mculab mculab-tflite-writer mculab_qemu_counters
bench_tflite_models() {
  local out=$1 work=$2
  local models="$ROOT/../shared/models/mlperf-tiny"
  if [ "$QUICK" = 1 ]; then
    echo "Quick run: not measured here (tests/e2e/test_model_lab.py runs these models)." >>"$out"
    return 0
  fi
  if [ ! -d "$models" ]; then
    echo "Skipped: no models at $models." >>"$out"
    return 0
  fi
  MCULAB_BIN="$BIN" MCULAB_AN547_ELF="$BUILD/firmware/mculab-runner-an547.elf" \
    MCULAB_AN500_ELF="$BUILD/firmware/mculab-runner-an500.elf" \
    MCULAB_QEMU_PLUGIN="$BUILD/lib/libmculab-qemu-counters.so" MCULAB_TEST_OUTPUT="$work" \
    "$PY" "$ROOT/bench/models_table.py" "$models" >>"$out"
}
