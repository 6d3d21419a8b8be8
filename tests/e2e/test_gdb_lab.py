"""End to end: real server + real agent, QEMU's gdbstub as the GDB server of `gdb` boards (runner
loaded over GDB only, QEMU in the job sandbox). The an547 (Cortex-M55) and an500 (Cortex-M7)
runners on the direct QEMU boards and on gdb boards (link: QEMU's UART socket), and the an500's RTT
build on a gdb board (link: RTT read by the agent over GDB, no UART). Every gdb board must give the
direct board's per-iteration counts and verified checksums for the same job."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import lablib  # noqa: E402

SWEEP = ("id,N,C,H,W,K,kernel_shape_0,kernel_shape_1,pads_0,pads_1,strides_0,strides_1\n"
         "0,1,4,8,8,4,3,3,1,1,1,1\n"
         "1,1,8,8,8,8,1,1,0,0,1,1\n")
ITER = 20
AN500_ELF = lablib.AN500_ELF
AN500_RTT_ELF = os.path.join(os.path.dirname(AN500_ELF), "mculab-runner-an500-rtt.elf") \
    if AN500_ELF else ""


def gdb_board(name, kind, machine, elf, cpu, rtt):
    qemu = (f"qemu-system-arm -M {machine} -S -icount shift=5,sleep=off -display none "
            "-monitor none -chardev socket,id=gdb,path={gdb},server=on,wait=off -gdb chardev:gdb ")
    board = {"name": name, "kind": kind, "backend": "gdb", "emulated": True, "firmware": elf,
             "workload_addr": "0x60000000", "gdb_link": "unix", "timeout_s": 300,
             "icount_shift": 5,  # the QEMU behind it: its timer reported in instructions
             "tags": {"cpu": cpu}}
    if rtt:
        board["link"] = "rtt"
        board["gdb_server"] = qemu + "-serial null"
    else:
        board["gdb_server"] = qemu + "-chardev socket,id=link,path={link},server=on,wait=on " \
                                     "-serial chardev:link"
    return board


@unittest.skipUnless(lablib.AN547_ELF and os.path.exists(lablib.AN547_ELF) and
                     os.path.exists(AN500_RTT_ELF),
                     "the an547/an500 runner firmware was not built (arm-none-eabi-gcc missing)")
class GdbLabTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.lab = lablib.Lab("gdb-lab", [
            lablib.qemu_board(),
            lablib.an500_board(),
            gdb_board("an547-gdb-0", "corstone300-qemu-gdb", "mps3-an547", lablib.AN547_ELF,
                      "cortex-m55", rtt=False),
            gdb_board("an500-gdb-0", "cm7-qemu-gdb", "mps2-an500", AN500_ELF, "cortex-m7",
                      rtt=False),
            gdb_board("an500-rtt-0", "cm7-qemu-rtt", "mps2-an500", AN500_RTT_ELF, "cortex-m7",
                      rtt=True),
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

    def assert_same(self, job, ref, kind):
        self.assertTrue(job["provenance"]["emulated"])
        self.assertIn("GDB server", job["provenance"]["note"])
        self.assertEqual(len(job["cases"]), len(ref["cases"]))
        for a, b in zip(job["cases"], ref["cases"]):
            self.assertTrue(a["checksum_ok"], f"{kind} case {a['id']}: checksum not verified")
            self.assertEqual(a["n"], ITER)
            self.assertEqual(a["samples"], b["samples"],
                             f"{kind} case {a['id']}: counts differ from the reference board")

    def test_an547_on_a_gdb_board_equals_the_direct_qemu_board(self):
        direct = self.submit("corstone300-qemu")
        job = self.submit("corstone300-qemu-gdb")
        self.assertEqual(job["provenance"]["firmware_sha256"],
                         direct["provenance"]["firmware_sha256"])
        self.assert_same(job, direct, "corstone300-qemu-gdb")

    def test_an500_over_gdb_and_over_rtt_equal_the_direct_qemu_board(self):
        direct = self.submit("cm7-qemu")
        self.assertEqual(direct["provenance"]["cpu"], "cortex-m7")
        uart = self.submit("cm7-qemu-gdb")
        self.assertEqual(uart["provenance"]["firmware_sha256"],
                         direct["provenance"]["firmware_sha256"])
        self.assert_same(uart, direct, "cm7-qemu-gdb")
        rtt = self.submit("cm7-qemu-rtt")
        self.assertNotEqual(rtt["provenance"]["firmware_sha256"],
                            direct["provenance"]["firmware_sha256"])
        self.assert_same(rtt, direct, "cm7-qemu-rtt")


if __name__ == "__main__":
    unittest.main(verbosity=2)
