#!/usr/bin/env python3
"""Per model and board kind: emulated instructions per inference and per MAC (the TFLite runner's
reference kernels and its fast set, `mculab submit --kernels reference` and the default), MVE instructions, the planned arena and
the flash the runner uses. Runs a throw-away lab (tests/lib/lablib.py) with the QEMU boards and
prints a markdown table; bench/results/tflite_models.md holds its output.

  MCULAB_BIN=build/bin MCULAB_AN547_ELF=build/firmware/mculab-runner-an547.elf \\
  MCULAB_AN500_ELF=build/firmware/mculab-runner-an500.elf \\
  MCULAB_QEMU_PLUGIN=build/lib/libmculab-qemu-counters.so \\
  python3 bench/models_table.py [--only NAME,...] [MODELS_DIR]
      (default ../shared/models/mlperf-tiny; --only: the models whose names contain one of these)

Besides the MLPerf Tiny models and the sample net: MobileNetV2 int8 at 224x224
(`mculab-tflite-writer --mobilenet-v2`, 301 M MACs). "job wall" is the job's wall time on this
machine, submit to result: QEMU's start, one warm-up and two measured inferences.
"""
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "lib"))
import lablib  # noqa: E402

MODELS = ["kws_ref_model.tflite", "ic_resnet8_int8.tflite", "vww_96_int8.tflite",
          "ad01_int8.tflite"]


def main():
    args = sys.argv[1:]
    only = []
    if len(args) >= 2 and args[0] == "--only":
        only = args[1].split(",")
        args = args[2:]
    models_dir = args[0] if args else os.path.join(HERE, "..", "..", "shared", "models",
                                                   "mlperf-tiny")
    # (board, kernel set asked for, label): one TFLite runner per port, both sets.
    boards = [("an547-0", "reference", "Cortex-M55 (an547), reference kernels"),
              ("an547-0", "fast", "Cortex-M55 (an547), Helium kernels"),
              ("an500-0", "reference", "Cortex-M7 (an500), reference kernels"),
              ("an500-0", "fast", "Cortex-M7 (an500), DSP kernels")]
    lab = lablib.Lab("models-table", [lablib.qemu_board("an547-0"), lablib.an500_board()])
    rows = []
    with lab:
        sample = os.path.join(lab.home, "sample.tflite")
        subprocess.run([os.path.join(lablib.BIN, "mculab-tflite-writer"), sample], check=True,
                       capture_output=True)
        mobilenet = os.path.join(lab.home, "mobilenet_v2.tflite")
        subprocess.run([os.path.join(lablib.BIN, "mculab-tflite-writer"), "--mobilenet-v2",
                        mobilenet], check=True, capture_output=True)
        paths = [("sample (tools/tflite_writer)", sample)]
        paths += [(m, os.path.join(models_dir, m)) for m in MODELS
                  if os.path.exists(os.path.join(models_dir, m))]
        paths.append(("MobileNetV2 224 int8 (tools/tflite_writer)", mobilenet))
        if only:
            paths = [p for p in paths if any(o.lower() in p[0].lower() for o in only)]
        for name, path in paths:
            g = json.loads(subprocess.run([os.path.join(lablib.BIN, "mculab"), "models", "inspect",
                                           "--json", path], check=True, capture_output=True,
                                          text=True).stdout)
            for board, kernels, label in boards:
                t0 = time.monotonic()
                res = lab.cli_json("submit", "--board", board, "--model", path, "--kernels", kernels,
                                   "--iterations", "2",
                                   "--warmup", "1", "--events",
                                   # the M7 has no MVE: the an500 cannot count it
                                   "instructions,mve_instructions" if board.startswith("an547")
                                   else "instructions",
                                   "--wait", timeout=1800)
                wall = time.monotonic() - t0
                if res["state"] != "succeeded":
                    raise SystemExit(f"{name} on {board}: {res.get('message')}")
                ev = {e["event"]: e["median"] for e in res["events"]}
                mem = res["memory"]
                flash = sum(v for v in (mem.get("flash") or {}).values())
                rows.append((name, label, g["macs"], ev["instructions"],
                             ev["instructions"] / max(g["macs"], 1), ev.get("mve_instructions"),
                             mem["runner"]["arena_used_bytes"], flash, g["model_bytes"], wall))
    print("| model | board, kernels | MACs | instructions / inference | per MAC | MVE "
          "instructions | planned arena (B) | runner flash (B) | model (B) | job wall (s) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        mve = "-" if r[5] is None else f"{r[5]:,.0f}"
        print(f"| {r[0]} | {r[1]} | {r[2]:,} | {r[3]:,.0f} | {r[4]:.2f} | {mve} | {r[6]:,} | "
              f"{r[7]:,} | {r[8]:,} | {r[9]:.1f} |")


if __name__ == "__main__":
    main()
