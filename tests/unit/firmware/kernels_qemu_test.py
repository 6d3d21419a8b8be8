#!/usr/bin/env python3
"""Runs the kernel self-test ELF (tests/kernels_selftest) under qemu-system-arm and passes when
its last line says PASS: the board's fast kernels (Helium on mps3-an547, DSP on mps2-an500) gave
the reference's outputs on every case.

usage: kernels_qemu_test.py QEMU MACHINE ELF [EXPECTED_SET]
"""
import subprocess
import sys
import time


def main():
    qemu, machine, elf = sys.argv[1:4]
    expected_set = sys.argv[4] if len(sys.argv) > 4 else None
    argv = [qemu, "-M", machine, "-kernel", elf, "-display", "none", "-monitor", "none",
            "-serial", "stdio", "-sandbox",
            "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                            errors="replace")
    deadline = time.monotonic() + 600
    result = None
    kernel_set = None
    try:
        for line in proc.stdout:
            sys.stdout.write(line)
            if line.startswith("kernels-selftest: PASS"):
                result = True
            elif line.startswith("kernels-selftest: FAIL"):
                result = False
            elif line.startswith("kernels-selftest: "):
                kernel_set = line.split(":", 1)[1].strip()
            if result is not None or time.monotonic() > deadline:
                break
    finally:
        proc.kill()
        proc.wait()
    if result is None:
        print("no PASS/FAIL line from the self-test")
        return 1
    if expected_set is not None and kernel_set != expected_set:
        print(f"the self-test ran the {kernel_set} set, not {expected_set}")
        return 1
    return 0 if result else 1


if __name__ == "__main__":
    sys.exit(main())
