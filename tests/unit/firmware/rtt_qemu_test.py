#!/usr/bin/env python3
"""The RTT link of the runner firmware, for real: the an500-rtt ELF under qemu-system-arm
-M mps2-an500, driven through QEMU's gdbstub the way a GDB backend drives it (breakpoint on
mculab_rtt_flush, read the SEGGER RTT up ring and advance RdOff, write the down ring and advance
WrOff, continue). The session over RTT must give the same HELLO, checksums and per-iteration counts
as the an500 UART ELF over its serial link, and RTT stops must happen outside measured regions (the
counts being equal says so).

  rtt_qemu_test.py QEMU AN500_ELF AN500_RTT_ELF READELF
"""
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "firmware_stub", "tools"))
import runner_probe as rp  # noqa: E402  (the Python frame codec and workload builder)

QEMU, ELF_UART, ELF_RTT, READELF = sys.argv[1:5] if len(sys.argv) >= 5 else (None,) * 4
WORKLOAD_ADDR = 0x60000000
CASES = [(0, [1, 8, 16, 16, 8, 3, 3, 1, 1, 1, 1]), (1, [1, 3, 9, 9, 4, 3, 3, 0, 0, 2, 2])]
ITERATIONS = 300  # ~18 KB of SAMPLE frames: the 4 KiB up ring fills several times mid-run
TIMEOUT_S = 60


def symbols(elf):
    out = subprocess.run([READELF, "-s", "-W", elf], check=True, capture_output=True,
                         text=True).stdout
    table = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[0].endswith(":") and f[0][:-1].isdigit():
            table[f[7]] = int(f[1], 16)
    return table


class Gdb:
    """A minimal GDB remote serial protocol client (acknowledged mode)."""

    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX)
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            try:
                self.s.connect(path)
                break
            except (FileNotFoundError, ConnectionRefusedError):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.01)
        self.s.settimeout(TIMEOUT_S)
        self.buf = b""

    def _reply(self):
        while True:
            start = self.buf.find(b"$")
            if start >= 0:
                end = self.buf.find(b"#", start)
                if end >= 0 and len(self.buf) >= end + 3:
                    data = self.buf[start + 1:end]
                    self.buf = self.buf[end + 3:]
                    self.s.sendall(b"+")
                    return data.decode()
            chunk = self.s.recv(65536)
            if not chunk:
                raise ConnectionError("gdbstub closed")
            self.buf += chunk

    def cmd(self, data):
        cs = sum(data.encode()) & 0xFF
        self.s.sendall(f"${data}#{cs:02x}".encode())
        return self._reply()

    def read(self, addr, n):
        out = b""
        while len(out) < n:
            chunk = min(n - len(out), 1024)
            r = self.cmd(f"m{addr + len(out):x},{chunk:x}")
            if r.startswith("E"):
                raise IOError(f"m{addr:x}: {r}")
            out += bytes.fromhex(r)
        return out

    def write(self, addr, data):
        r = self.cmd(f"M{addr:x},{len(data):x}:{data.hex()}")
        if r != "OK":
            raise IOError(f"M{addr:x}: {r}")

    def u32(self, addr):
        return struct.unpack("<I", self.read(addr, 4))[0]

    def set_u32(self, addr, v):
        self.write(addr, struct.pack("<I", v))


def frames_of(buf):
    out = []
    while b"\0" in buf:
        enc, buf = buf.split(b"\0", 1)
        if enc:
            out.append(rp.decode_frame(enc))
    return out, buf


def configure_and_run(workload):
    return (rp.frame(0x81, struct.pack("<IIIII", ITERATIONS, 1, len(workload), 0, 0)) +
            rp.frame(0x82))


def run_over_rtt(workload_path, workload):
    sym = symbols(ELF_RTT)
    cb, flush = sym["_SEGGER_RTT"], sym["mculab_rtt_flush"] & ~1
    with tempfile.TemporaryDirectory() as tmp:
        sock = os.path.join(tmp, "gdb.sock")
        qemu = subprocess.Popen(
            [QEMU, "-M", "mps2-an500", "-kernel", ELF_RTT, "-icount", "shift=5,sleep=off",
             "-S", "-gdb", f"unix:{sock},server=on,wait=off", "-display", "none",
             "-monitor", "none", "-serial", "null", "-device",
             f"loader,file={workload_path},addr=0x{WORKLOAD_ADDR:08x}"])
        try:
            gdb = Gdb(sock)
            assert gdb.cmd(f"Z0,{flush:x},2") == "OK"
            pending = b""   # agent -> runner bytes not yet in the down ring
            raw = b""
            got, stops = [], 0
            first = True
            while True:
                if not first:
                    # Off the breakpoint the way GDB does it: remove, step, insert, continue.
                    assert gdb.cmd(f"z0,{flush:x},2") == "OK"
                    gdb.cmd("s")
                    assert gdb.cmd(f"Z0,{flush:x},2") == "OK"
                first = False
                stop = gdb.cmd("c")
                assert stop.startswith("T05") or stop.startswith("S05"), stop
                stops += 1
                up = cb + 24
                buf, size, wr, rd = struct.unpack("<4xIIII", gdb.read(up, 20))
                while rd != wr:
                    end = wr if wr > rd else size
                    raw += gdb.read(buf + rd, end - rd)
                    rd = end % size
                gdb.set_u32(up + 16, rd)
                new, raw = frames_of(raw)
                for t, p in new:
                    got.append((t, p))
                    if t == 0x01:
                        pending += configure_and_run(workload)
                if pending:
                    down = cb + 48
                    dbuf, dsize, dwr, drd = struct.unpack("<4xIIII", gdb.read(down, 20))
                    while pending and (dwr + 1) % dsize != drd:
                        gdb.write(dbuf + dwr, pending[:1])
                        pending = pending[1:]
                        dwr = (dwr + 1) % dsize
                    gdb.set_u32(down + 12, dwr)
                if any(t == 0x08 for t, _ in got):
                    return got, stops
        finally:
            qemu.kill()
            qemu.wait()


def run_over_uart(workload_path, workload):
    with tempfile.TemporaryDirectory() as tmp:
        sock = os.path.join(tmp, "uart.sock")
        srv = socket.socket(socket.AF_UNIX)
        srv.bind(sock)
        srv.listen(1)
        qemu = subprocess.Popen(
            [QEMU, "-M", "mps2-an500", "-kernel", ELF_UART, "-icount", "shift=5,sleep=off",
             "-display", "none", "-monitor", "none", "-chardev", f"socket,id=l,path={sock}",
             "-serial", "chardev:l", "-device",
             f"loader,file={workload_path},addr=0x{WORKLOAD_ADDR:08x}"])
        try:
            srv.settimeout(TIMEOUT_S)
            conn, _ = srv.accept()
            conn.settimeout(TIMEOUT_S)
            raw, got = b"", []
            while True:
                chunk = conn.recv(65536)
                if not chunk:
                    raise ConnectionError("UART link closed before DONE")
                new, raw = frames_of(raw + chunk)
                for t, p in new:
                    got.append((t, p))
                    if t == 0x01:
                        conn.sendall(configure_and_run(workload))
                if any(t == 0x08 for t, _ in got):
                    return got
        finally:
            qemu.kill()
            qemu.wait()


def summary(msgs):
    hello = next(p for t, p in msgs if t == 0x01)
    samples = [struct.unpack_from("<HBBIQ", p) for t, p in msgs if t == 0x03]
    ends = [struct.unpack_from("<HBBIQ", p) for t, p in msgs if t == 0x09]
    done = next(struct.unpack("<HH", p) for t, p in msgs if t == 0x08)
    return {
        "port": rp.cstr(hello[24:40]),
        "emulated": bool(hello[3] & 1),
        "timers": [(s[0], s[3], s[4]) for s in samples],
        "checksums": [(e[0], e[3]) for e in ends],
        "done": done,
    }


@unittest.skipUnless(QEMU and ELF_RTT and os.path.exists(ELF_RTT or ""), "needs QEMU and the ELFs")
class RttOverQemuGdbstub(unittest.TestCase):
    def test_rtt_session_equals_the_uart_session(self):
        workload = rp.build_workload(1, CASES, 2024)
        with tempfile.NamedTemporaryFile(suffix=".bin", delete=False) as f:
            f.write(workload)
            path = f.name
        try:
            rtt_msgs, stops = run_over_rtt(path, workload)
            uart_msgs = run_over_uart(path, workload)
        finally:
            os.unlink(path)
        rtt, uart = summary(rtt_msgs), summary(uart_msgs)
        self.assertEqual(rtt["port"], "an500")
        self.assertTrue(rtt["emulated"])
        self.assertEqual(rtt["done"], (len(CASES), 0))
        self.assertEqual(len(rtt["timers"]), len(CASES) * ITERATIONS)
        self.assertGreater(stops, 3, "the up ring should have filled during the run")
        self.assertTrue(all(t > 0 for _, _, t in rtt["timers"]))
        self.assertEqual(rtt["checksums"], uart["checksums"])
        self.assertEqual(rtt["timers"], uart["timers"],
                         "an RTT stop inside a measured region would change the counts")
        print(f"RTT session: {len(rtt_msgs)} frames in {stops} stops")


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
