#!/usr/bin/env python3
"""What the emulated boards cost: wall time per emulated instruction for one MobileNetV2 inference
(the writer's, int8) on QEMU's mps3-an547 (Cortex-M55, Helium kernels) and mps2-an500 (Cortex-M7,
DSP kernels), each TFLite runner under three set-ups:
  - icount and the counting plugin: what a job with --events runs under;
  - icount alone: a job without --events (the lab's default);
  - neither: QEMU as fast as it goes (the lab never runs so: without icount the timer is host
    time, not instructions).
The instructions are the plugin's count of the measured inference (the same in every set-up: the
firmware and its input do not change). Wall time is from CASE_START to the inference's SAMPLE as
firmware_stub/tools/runner_probe.py --timing sees them on this machine; QEMU's start is outside
it. Prints a markdown table.

  python3 bench/emulation_cost.py BIN FIRMWARE_DIR PLUGIN [--resolution R] [--alpha A]
"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROBE = os.path.join(HERE, "..", "firmware_stub", "tools", "runner_probe.py")

BOARDS = [("Cortex-M55 (an547), Helium kernels", "mps3-an547", "mculab-tflite-runner-an547.elf"),
          ("Cortex-M7 (an500), DSP kernels", "mps2-an500", "mculab-tflite-runner-an500.elf")]


def inference(elf, machine, model, icount, plugin_out=None, plugin=None):
    """Wall seconds of one measured inference, and the probe's output."""
    cmd = [sys.executable, PROBE, "--qemu", elf, "--machine", machine, "--op", "custom",
           "--blob", model, "--case", "1", "--iterations", "1", "--warmup", "0", "--timing",
           "--icount-shift", "5" if icount else "-1"]
    if plugin_out:
        cmd += ["--qemu-arg=-plugin", f"--qemu-arg={plugin},out={plugin_out}"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    stamps = {}
    for line in r.stdout.splitlines():
        m = re.match(r"\[\s*([0-9.]+)s\] (CASE_START|SAMPLE)", line)
        if m and m.group(2) not in stamps:
            stamps[m.group(2)] = float(m.group(1))
    if "CASE_START" not in stamps or "SAMPLE" not in stamps:
        raise SystemExit(f"no CASE_START and SAMPLE in the probe's output:\n{r.stdout}")
    return stamps["SAMPLE"] - stamps["CASE_START"]


def plugin_instructions(path):
    with open(path) as f:
        for line in f:
            if line.startswith("iter "):
                return int(line.split()[3])
    raise SystemExit(f"no iter line in {path}")


def main():
    args = sys.argv[1:]
    if len(args) < 3:
        raise SystemExit(__doc__)
    bin_dir, fw_dir, plugin = args[:3]
    resolution, alpha = "224", "1.0"
    rest = args[3:]
    while rest:
        if rest[0] == "--resolution":
            resolution = rest[1]
        elif rest[0] == "--alpha":
            alpha = rest[1]
        else:
            raise SystemExit(f"unknown argument {rest[0]}")
        rest = rest[2:]
    with tempfile.TemporaryDirectory(prefix="mculab-emulation-cost-") as tmp:
        model = os.path.join(tmp, "mobilenet_v2.tflite")
        subprocess.run([os.path.join(bin_dir, "mculab-tflite-writer"), "--mobilenet-v2",
                        "--resolution", resolution, "--alpha", alpha, model], check=True,
                       capture_output=True)
        print(f"MobileNetV2 int8 {resolution}x{resolution}, width {alpha} "
              f"(`mculab-tflite-writer --mobilenet-v2`, {os.path.getsize(model):,} bytes), one "
              "measured inference; wall time from CASE_START to its SAMPLE.\n")
        print("| board | instructions / inference | icount + plugin: wall (s), ns / instruction "
              "| icount alone | neither | plugin's share | icount's share |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for label, machine, elf_name in BOARDS:
            elf = os.path.join(fw_dir, elf_name)
            if not os.path.exists(elf):
                print(f"| {label} | not built ({elf}) | | | | | |")
                continue
            counts = os.path.join(tmp, elf_name + ".counts")
            with_plugin = inference(elf, machine, model, True, counts, plugin)
            insns = plugin_instructions(counts)
            icount_only = inference(elf, machine, model, True)
            neither = inference(elf, machine, model, False)

            def cell(wall):
                return f"{wall:.2f} s, {wall * 1e9 / insns:.2f} ns"
            print(f"| {label} | {insns:,} | {cell(with_plugin)} | {cell(icount_only)} | "
                  f"{cell(neither)} | {(with_plugin - icount_only) / with_plugin:.0%} | "
                  f"{(icount_only - neither) / with_plugin:.0%} |")


if __name__ == "__main__":
    main()
