"""End to end: real server + real agent, the an547 runner run three ways on the same job: the direct
QEMU board, the `gdb` board with QEMU's gdbstub as the GDB server (runner loaded over GDB, link on
QEMU's UART socket), and the same over RTT read by the agent through GDB. The per-iteration counts
and checksums must be identical."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import lablib  # noqa: E402

SWEEP = ("id,N,C,H,W,K,kernel_shape_0,kernel_shape_1,pads_0,pads_1,strides_0,strides_1\n"
         "0,1,4,8,8,4,3,3,1,1,1,1\n"
         "1,1,8,8,8,8,1,1,0,0,1,1\n")
ITER = 20
QEMU = ("qemu-system-arm -M mps3-an547 -S -icount shift=5,sleep=off -display none -monitor none "
        "-chardev socket,id=gdb,path={gdb},server=on,wait=off -gdb chardev:gdb ")


def gdb_board(name, kind, rtt):
    board = {"name": name, "kind": kind, "backend": "gdb", "emulated": True,
             "firmware": lablib.AN547_ELF, "workload_addr": "0x60000000", "gdb_link": "unix",
             "timeout_s": 300, "tags": {"cpu": "cortex-m55"}}
    if rtt:
        board["link"] = "rtt"
        board["gdb_server"] = QEMU + "-serial null"
    else:
        board["gdb_server"] = QEMU + "-chardev socket,id=link,path={link},server=on,wait=on " \
                                     "-serial chardev:link"
    return board


@unittest.skipUnless(lablib.AN547_ELF and os.path.exists(lablib.AN547_ELF),
                     "the an547 runner firmware was not built (arm-none-eabi-gcc missing)")
class GdbLabTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.lab = lablib.Lab("gdb-lab", [
            lablib.qemu_board(),
            gdb_board("an547-gdb-0", "corstone300-qemu-gdb", rtt=False),
            gdb_board("an547-rtt-0", "corstone300-qemu-rtt", rtt=True),
        ])
        cls.lab.__enter__()
        cls.csv = lablib.write_csv(cls.lab.home, "sweep.csv", SWEEP)

    @classmethod
    def tearDownClass(cls):
        cls.lab.close()

    def submit(self, kind):
        job = self.lab.cli_json("submit", "--kind", kind, "--op", "conv2d_s8", "--cases", self.csv,
                                "--iterations", str(ITER), "--warmup", "1", "--wait", timeout=600)
        self.assertEqual(job["state"], "succeeded", f"{kind}: {job.get('message')}")
        return job

    def test_gdb_and_rtt_boards_equal_the_direct_qemu_board(self):
        direct = self.submit("corstone300-qemu")
        for kind in ("corstone300-qemu-gdb", "corstone300-qemu-rtt"):
            job = self.submit(kind)
            self.assertTrue(job["provenance"]["emulated"])
            self.assertIn("GDB server", job["provenance"]["note"])
            self.assertEqual(job["provenance"]["firmware_sha256"],
                             direct["provenance"]["firmware_sha256"])
            self.assertEqual(len(job["cases"]), len(direct["cases"]))
            for a, b in zip(job["cases"], direct["cases"]):
                self.assertTrue(a["checksum_ok"], f"{kind} case {a['id']}: checksum not verified")
                self.assertEqual(a["n"], ITER)
                self.assertEqual(a["samples"], b["samples"],
                                 f"{kind} case {a['id']}: counts differ from the direct QEMU board")


if __name__ == "__main__":
    unittest.main(verbosity=2)
