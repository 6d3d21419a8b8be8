#!/usr/bin/env python3
"""What a fresh QEMU costs from `continue` to the runner's first bytes (the boot to HELLO of a
warm board's job): wall time and the CPU time of each QEMU thread that ran
(/proc/PID/task/TID/schedstat), so the figure holds on a loaded machine.

QEMU (unsandboxed) starts halted (-S) with the runner loaded by -kernel, its UART on a unix socket
and its gdbstub on another, as a warm board's QEMU; the script sends one `vCont;c` and waits for
the link's first bytes. Usage: bench/qemu_boot_cpu.py RUNNER_ELF [RUNS]
"""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time


def connect(path):
    deadline = time.monotonic() + 15
    while True:
        try:
            s = socket.socket(socket.AF_UNIX)
            s.connect(path)
            return s
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.005)


def cpu_ms(pid):
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
            out[tid] = int(f.read().split()[0]) / 1e6
    return out


def one(elf):
    d = tempfile.mkdtemp(prefix="mculab-boot-cpu-")
    link_path, gdb_path = os.path.join(d, "link.sock"), os.path.join(d, "gdb.sock")
    p = subprocess.Popen(
        ["qemu-system-arm", "-M", "mps3-an547", "-S", "-icount", "shift=5,sleep=off",
         "-display", "none", "-monitor", "none", "-no-user-config",
         "-chardev", f"socket,id=link,path={link_path},server=on,wait=on", "-serial",
         "chardev:link", "-chardev", f"socket,id=gdb,path={gdb_path},server=on,wait=off",
         "-gdb", "chardev:gdb", "-kernel", elf], stderr=subprocess.DEVNULL)
    try:
        link = connect(link_path)
        gdb = connect(gdb_path)
        time.sleep(0.3)  # QEMU settled: halted, both sockets open
        before = cpu_ms(p.pid)
        t0 = time.monotonic()
        gdb.sendall(b"$vCont;c#a8")
        link.recv(64)
        wall = (time.monotonic() - t0) * 1000
        after = cpu_ms(p.pid)
        threads = sorted((after[t] - before.get(t, 0) for t in after), reverse=True)
        return wall, [c for c in threads if c > 0.01]
    finally:
        p.kill()
        p.wait()
        shutil.rmtree(d, ignore_errors=True)


def main():
    elf = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    print("| run | continue -> first link bytes, wall ms | QEMU threads' CPU ms |")
    print("|---|---|---|")
    for i in range(runs):
        wall, threads = one(elf)
        print(f"| {i + 1} | {wall:.2f} | {', '.join(f'{c:.2f}' for c in threads)} |")


if __name__ == "__main__":
    main()
