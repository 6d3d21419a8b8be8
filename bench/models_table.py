#!/usr/bin/env python3
"""Per model and board kind: emulated instructions per inference and per MAC (the TFLite runner's
reference kernels and its fast set, `mculab submit --kernels reference` and the default), MVE instructions, the planned arena and
the flash the runner uses. Runs a throw-away lab (tests/lib/lablib.py) with the QEMU boards and
prints a markdown table; bench/results/tflite_models.md holds its output.

  MCULAB_BIN=build/bin MCULAB_AN547_ELF=build/firmware/mculab-runner-an547.elf \\
  MCULAB_AN500_ELF=build/firmware/mculab-runner-an500.elf \\
  MCULAB_QEMU_PLUGIN=build/lib/libmculab-qemu-counters.so \\
  python3 bench/models_table.py [MODELS_DIR]     (default ../shared/models/mlperf-tiny)
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "lib"))
import lablib  # noqa: E402

MODELS = ["kws_ref_model.tflite", "ic_resnet8_int8.tflite", "vww_96_int8.tflite",
          "ad01_int8.tflite"]


def main():
    models_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "shared",
                                                                     "models", "mlperf-tiny")
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
        paths = [("sample (tools/tflite_writer)", sample)]
        paths += [(m, os.path.join(models_dir, m)) for m in MODELS
                  if os.path.exists(os.path.join(models_dir, m))]
        for name, path in paths:
            g = json.loads(subprocess.run([os.path.join(lablib.BIN, "mculab"), "models", "inspect",
                                           "--json", path], check=True, capture_output=True,
                                          text=True).stdout)
            for board, kernels, label in boards:
                res = lab.cli_json("submit", "--board", board, "--model", path, "--kernels", kernels,
                                   "--iterations", "2",
                                   "--warmup", "1", "--events", "instructions,mve_instructions",
                                   "--wait", timeout=1800)
                if res["state"] != "succeeded":
                    raise SystemExit(f"{name} on {board}: {res.get('message')}")
                ev = {e["event"]: e["median"] for e in res["events"]}
                mem = res["memory"]
                flash = sum(v for v in (mem.get("flash") or {}).values())
                rows.append((name, label, g["macs"], ev["instructions"],
                             ev["instructions"] / max(g["macs"], 1), ev["mve_instructions"],
                             mem["runner"]["arena_used_bytes"], flash, g["model_bytes"]))
    print("| model | board, kernels | MACs | instructions / inference | per MAC | MVE "
          "instructions | planned arena (B) | runner flash (B) | model (B) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]:,} | {r[3]:,.0f} | {r[4]:.2f} | {r[5]:,.0f} | {r[6]:,} | "
              f"{r[7]:,} | {r[8]:,} |")


if __name__ == "__main__":
    main()
