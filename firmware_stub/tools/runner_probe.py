#!/usr/bin/env python3
"""runner_probe: talk to a mculab runner by hand (debug aid, not used by the lab).

Speaks the runner protocol (docs/runner-protocol.md, protocol 2) with its own Python COBS/CRC-32
code, so it also cross-checks the C codec. It builds a workload, starts the runner, sends CONFIGURE
and RUN, prints every frame it gets back (HELLO's counter units, SAMPLE's counters, OP_SAMPLE,
MEMORY) and exits 0 when DONE reports success.

  # the host runner
  runner_probe.py --host build/bin/mculab-runner-host --case 1,8,16,16,8,3,3,1,1,1,1
  # the an547 firmware under QEMU (the probe starts qemu-system-arm itself)
  runner_probe.py --qemu build/firmware/mculab-runner-an547.elf --case 1,8,16,16,8,3,3,1,1,1,1
  # a custom runner and its blob, with op profiles and memory reports
  runner_probe.py --host build/bin/mculab-example-runner-host --op custom --blob model.bin --ops --memory
  # the calibration loops under the QEMU counting plugin
  runner_probe.py --qemu build/firmware/mculab-runner-an547.elf --op calibrate --case 2,1000 \
      --qemu-arg=-plugin --qemu-arg=build/lib/libmculab-qemu-counters.so,out=/tmp/counts.txt
  # a QEMU you started yourself with -chardev socket,path=/tmp/x.sock,server=on,wait=on
  runner_probe.py --socket /tmp/x.sock --workload-out wl.bin ...   (write wl.bin first: --build-only)

Cases are the op's parameters in its order (firmware_stub/include/mculab/ops.h), comma separated.
"""
import argparse
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import zlib

VERSION = 2
TYPES = {0x01: "HELLO", 0x02: "CASE_START", 0x03: "SAMPLE", 0x04: "OP_SAMPLE", 0x05: "MEMORY",
         0x06: "LOG", 0x07: "ERROR", 0x08: "DONE", 0x09: "CASE_END", 0x81: "CONFIGURE",
         0x82: "RUN", 0x83: "ABORT"}
OPS = {"conv2d_s8": (1, 11), "fully_connected_s8": (2, 3), "depthwise_conv2d_s8": (3, 13),
       "calibrate": (100, 2)}
OP_CUSTOM = 0xFFFF
QEMU_ARGS = ["-M", "mps3-an547", "-icount", "shift=5,sleep=off",
             "-sandbox", "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny",
             "-display", "none",
             "-monitor", "none"]


def cobs_encode(raw: bytes) -> bytes:
    out = bytearray([0])
    code_at, code = 0, 1
    for b in raw:
        if b == 0:
            out[code_at] = code
            code_at, code = len(out), 1
            out.append(0)
        else:
            out.append(b)
            code += 1
            if code == 0xFF:
                out[code_at] = code
                code_at, code = len(out), 1
                out.append(0)
    out[code_at] = code
    return bytes(out)


def cobs_decode(enc: bytes) -> bytes:
    out, i = bytearray(), 0
    while i < len(enc):
        code = enc[i]
        i += 1
        if code == 0 or i + code - 1 > len(enc):
            raise ValueError("bad COBS")
        out += enc[i:i + code - 1]
        i += code - 1
        if code != 0xFF and i < len(enc):
            out.append(0)
    return bytes(out)


def frame(msg_type: int, payload: bytes = b"") -> bytes:
    raw = bytes([VERSION, msg_type]) + payload
    return cobs_encode(raw + struct.pack("<I", zlib.crc32(raw))) + b"\0"


def decode_frame(enc: bytes):
    raw = cobs_decode(enc)
    if len(raw) < 6:
        raise ValueError("short frame")
    if zlib.crc32(raw[:-4]) != struct.unpack("<I", raw[-4:])[0]:
        raise ValueError("bad CRC")
    if raw[0] != VERSION:
        raise ValueError("bad version")
    return raw[1], raw[2:-4]


def build_workload(op: int, cases, seed: int, blob: bytes = b"", flags: int = 0) -> bytes:
    nparams = len(cases[0][1]) if cases else 0
    body = struct.pack("<HHHH", op, nparams, len(cases), 0)
    for case_id, params in cases:
        body += struct.pack("<q", case_id) + struct.pack("<%di" % len(params), *params)
    if op == OP_CUSTOM:  # case ids, then the blob at the next multiple of 16 from the start
        body += b"\0" * ((-(24 + len(body))) % 16) + blob
    header = struct.pack("<IHHIIII", 0x574C434D, 1, 24, 24 + len(body), zlib.crc32(body), seed,
                         flags)
    return header + body


def cstr(b: bytes) -> str:
    return b.split(b"\0")[0].decode(errors="replace")


def describe(t: int, p: bytes) -> str:
    name = TYPES.get(t, "0x%02x" % t)
    if t == 0x01:
        flags, clock, unit, nunits = p[3], *struct.unpack_from("<IBB", p, 4)
        addr, wmax, arena = struct.unpack_from("<III", p, 12)
        units, at = [], 72
        for _ in range(nunits):
            uname, maxs, uflags, nev, nlen = cstr(p[at:at + 16]), p[at + 16], p[at + 17], \
                p[at + 18], p[at + 19]
            events = p[at + 20:at + 20 + nlen].decode()
            units.append(f"{uname}({maxs} at once{', external' if uflags & 1 else ''}: {events})")
            at += 20 + nlen
        return (f"HELLO runner {p[0]}.{p[1]}.{p[2]} port={cstr(p[24:40])} cpu={cstr(p[40:56])} "
                f"runtime={cstr(p[56:72])} clock={clock}Hz unit={'ns' if unit else 'cycles'} "
                f"emulated={bool(flags & 1)} custom={bool(flags & 2)} workload@0x{addr:08x} "
                f"max={wmax} arena={arena} units=[{'; '.join(units)}]")
    if t == 0x02:
        idx, _, cid = struct.unpack("<HHq", p)
        return f"CASE_START index={idx} id={cid}"
    if t == 0x03:
        idx, n, _, it, timer = struct.unpack_from("<HBBIQ", p)
        counters = struct.unpack_from("<%dQ" % n, p, 16)
        return f"SAMPLE case={idx} iteration={it} timer={timer} counters={list(counters)}"
    if t == 0x09:
        idx, n, _, crc, overhead = struct.unpack_from("<HBBIQ", p)
        counters = struct.unpack_from("<%dQ" % n, p, 16)
        return (f"CASE_END case={idx} checksum=0x{crc:08x} overhead={overhead} "
                f"counter_overhead={list(counters)}")
    if t == 0x04:
        idx, op, count, n, flags = struct.unpack_from("<HHIBB", p)
        metrics = [struct.unpack_from("<QQQ", p, 60 + 24 * k) for k in range(1 + n)]
        text = " ".join(f"[sum={a} min={b} max={c}]" for a, b, c in metrics)
        return (f"OP_SAMPLE case={idx} op={op} type={cstr(p[12:28])} name={cstr(p[28:60])} "
                f"count={count} flags={flags} {text}")
    if t == 0x05:
        idx, n = struct.unpack_from("<HB", p)
        entries = [(cstr(p[4 + 24 * k:20 + 24 * k]), *struct.unpack_from("<II", p, 20 + 24 * k))
                   for k in range(n)]
        return "MEMORY case=%d " % idx + " ".join(f"{c}={u}/{r}" for c, u, r in entries)
    if t == 0x06:
        return f"LOG level={p[0]} {p[1:].decode(errors='replace')}"
    if t == 0x07:
        code, idx = struct.unpack_from("<HH", p)
        return f"ERROR code={code} case={idx} {p[4:].decode(errors='replace')}"
    if t == 0x08:
        ran, status = struct.unpack("<HH", p)
        return f"DONE cases_run={ran} status={status}"
    return f"{name} {p.hex()}"


class Link:
    def __init__(self, read, write):
        self.read, self.write, self.buf = read, write, b""

    def frames(self):
        while True:
            while b"\0" not in self.buf:
                chunk = self.read()
                if not chunk:
                    return
                self.buf += chunk
            enc, self.buf = self.buf.split(b"\0", 1)
            if not enc:
                continue
            try:
                yield decode_frame(enc)
            except ValueError as e:
                print(f"dropped frame: {e}", file=sys.stderr)


def session(link: Link, args, start: float) -> int:
    status = None
    samples = {}
    for t, p in link.frames():
        if not args.quiet or t != 0x03:
            stamp = f"[{time.monotonic() - start:7.3f}s] " if args.timing else ""
            print(stamp + describe(t, p), flush=True)
        if t == 0x01:
            flags = (1 if args.ops else 0) | (2 if args.memory else 0)
            link.write(frame(0x81, struct.pack("<IIIII", args.iterations, args.warmup,
                                               args.workload_len, args.counter_mask, flags)))
            link.write(frame(0x82))
        elif t == 0x03:
            idx, _, _, _, timer = struct.unpack_from("<HBBIQ", p)
            samples.setdefault(idx, []).append(timer)
        elif t == 0x08:
            status = struct.unpack("<HH", p)[1]
            break
    for idx, vals in sorted(samples.items()):
        vals = sorted(vals)
        print(f"case {idx}: n={len(vals)} min={vals[0]} median={vals[len(vals) // 2]} "
              f"max={vals[-1]}")
    if status is None:
        print("link closed before DONE", file=sys.stderr)
        return 2
    return 0 if status == 0 else 1


def main() -> int:
    tmp = tempfile.mkdtemp(prefix="runner_probe.")
    try:
        return probe(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def probe(tmp: str) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--host", metavar="RUNNER", help="spawn the host runner binary")
    mode.add_argument("--qemu", metavar="ELF", help="start qemu-system-arm with this ELF")
    mode.add_argument("--socket", metavar="PATH", help="connect to a QEMU chardev socket")
    mode.add_argument("--build-only", action="store_true", help="only write --workload-out")
    ap.add_argument("--op", default="conv2d_s8", choices=sorted(OPS) + ["custom"])
    ap.add_argument("--blob", help="custom workload: the blob file (cases: --case ID)")
    ap.add_argument("--counter-mask", type=lambda v: int(v, 0), default=0)
    ap.add_argument("--ops", action="store_true", help="CONFIGURE: per-operator profiles")
    ap.add_argument("--memory", action="store_true", help="CONFIGURE: memory reports")
    ap.add_argument("--case", action="append", default=[], help="parameters, comma separated")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--kernels", choices=["fast", "reference"], default="fast",
                    help="the kernel set (workload flag MCULAB_WORKLOAD_REFERENCE_KERNELS)")
    ap.add_argument("--machine", default="mps3-an547",
                    help="--qemu: the QEMU machine (mps3-an547, mps2-an500)")
    ap.add_argument("--iterations", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--workload-len", type=int, default=0, help="CONFIGURE workload_len")
    ap.add_argument("--workload-out", help="also write the workload to this file")
    ap.add_argument("--icount-shift", type=int, default=5,
                    help="QEMU's -icount shift; -1: no -icount (QEMU runs as fast as it can)")
    ap.add_argument("--qemu-arg", action="append", default=[],
                    help="one more qemu-system-arm argument (repeat), e.g. --qemu-arg=-plugin")
    ap.add_argument("--quiet", action="store_true", help="do not print each SAMPLE")
    ap.add_argument("--timing", action="store_true", help="print when each frame arrived")
    args = ap.parse_args()

    if args.op == "custom":
        blob = open(args.blob, "rb").read() if args.blob else b""
        cases = [(int(c), []) for c in (args.case or ["0"])]
        wl = build_workload(OP_CUSTOM, cases, args.seed, blob,
                            flags=1 if args.kernels == "reference" else 0)
    else:
        op, nparams = OPS[args.op]
        cases = [(i, [int(v) for v in c.split(",")]) for i, c in enumerate(args.case)]
        for cid, params in cases:
            if len(params) != nparams:
                ap.error(f"case {cid}: {args.op} takes {nparams} parameters")
        wl = build_workload(op, cases, args.seed,
                            flags=1 if args.kernels == "reference" else 0)
    wl_path = args.workload_out or os.path.join(tmp, "workload.bin")
    with open(wl_path, "wb") as f:
        f.write(wl)
    if args.build_only:
        return 0

    start = time.monotonic()
    if args.host:
        proc = subprocess.Popen([args.host, wl_path], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

        def write(b):
            proc.stdin.write(b)
            proc.stdin.flush()
        rc = session(Link(lambda: os.read(proc.stdout.fileno(), 4096), write), args, start)
        proc.stdin.close()
        exit_status = proc.wait(timeout=30)
    else:
        proc = None
        sock_path = args.socket
        if args.qemu:
            sock_path = os.path.join(tmp, "link.sock")
            icount = ([] if args.icount_shift < 0 else
                      [QEMU_ARGS[2], QEMU_ARGS[3].replace("shift=5",
                                                          f"shift={args.icount_shift}")])
            cmd = (["qemu-system-arm", "-kernel", args.qemu, "-M", args.machine] + icount +
                   QEMU_ARGS[4:] +
                   ["-chardev", f"socket,id=link,path={sock_path},server=on,wait=on",
                    "-serial", "chardev:link",
                    "-device", f"loader,file={wl_path},addr=0x60000000"] + args.qemu_arg)
            print(" ".join(cmd), file=sys.stderr)
            proc = subprocess.Popen(cmd)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        for _ in range(500):
            try:
                sock.connect(sock_path)
                break
            except (FileNotFoundError, ConnectionRefusedError):
                time.sleep(0.002)
        rc = session(Link(lambda: sock.recv(4096), sock.sendall), args, start)
        exit_status = None
        if proc:
            # The runner parks its core after DONE (no semihosting): stop QEMU as the agent does.
            proc.kill()
            proc.wait(timeout=30)
        sock.close()
    elapsed = time.monotonic() - start
    print(f"runner exit status {exit_status}, wall {elapsed:.3f} s", file=sys.stderr)
    return rc if exit_status in (0, None) else 3


if __name__ == "__main__":
    sys.exit(main())
