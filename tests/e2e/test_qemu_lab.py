"""End to end: real server + real agent + QEMU mps3-an547 (Cortex-M55) running the runner firmware."""
import os
import sqlite3
import statistics
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import lablib  # noqa: E402

SWEEP = ("id,N,C,H,W,K,kernel_shape_0,kernel_shape_1,pads_0,pads_1,strides_0,strides_1\n"
         "0,1,4,8,8,4,3,3,1,1,1,1\n"
         "1,1,8,8,8,8,1,1,0,0,1,1\n"
         "2,1,8,12,12,4,3,3,0,0,2,2\n")
ITER = 5


@unittest.skipUnless(lablib.AN547_ELF and os.path.exists(lablib.AN547_ELF),
                     "the an547 runner firmware was not built (arm-none-eabi-gcc missing)")
class QemuLabTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.lab = lablib.Lab("qemu-lab", [lablib.qemu_board()])
        cls.lab.__enter__()
        cls.csv = lablib.write_csv(cls.lab.home, "sweep.csv", SWEEP)

    @classmethod
    def tearDownClass(cls):
        cls.lab.close()

    def submit(self):
        return self.lab.cli_json("submit", "--kind", "corstone300-qemu", "--op", "conv2d_s8",
                                 "--cases", self.csv, "--iterations", str(ITER), "--warmup", "1",
                                 "--wait", timeout=600)

    def test_conv2d_sweep_end_to_end(self):
        first = self.submit()
        self.assertEqual(first["state"], "succeeded", first.get("message"))
        self.assertEqual(len(first["cases"]), 3)
        prov = first["provenance"]
        self.assertTrue(prov["emulated"], "a QEMU board must label its figures emulated")
        # QEMU's icount virtual time, reported as executed instructions (README "What the numbers
        # are"): the unit every emulated board shares.
        self.assertEqual(prov["timer_unit"], "instructions")
        self.assertEqual(prov["cpu"], "cortex-m55")
        self.assertEqual(prov["port"], "an547")
        self.assertIn("QEMU", prov["note"])
        for c in first["cases"]:
            self.assertEqual(c["n"], ITER)
            self.assertTrue(c["checksum_ok"], f"case {c['id']}: checksum not verified")
            self.assertGreater(c["min"], 0, f"case {c['id']}: counts must be > 0")

        # The same job twice gives identical per-iteration counts (icount makes time deterministic).
        second = self.submit()
        self.assertEqual(second["state"], "succeeded", second.get("message"))
        for a, b in zip(first["cases"], second["cases"]):
            self.assertEqual(a["samples"], b["samples"], f"case {a['id']} differs between runs")

        # The rows are in SQLite, and the CSV export matches the stored medians.
        db = sqlite3.connect(f"file:{self.lab.db_path}?mode=ro", uri=True)
        try:
            medians = {}
            for index, case_id in enumerate([0, 1, 2]):
                vals = [v for (v,) in db.execute(
                    "SELECT s.value FROM samples s JOIN runs r ON r.id = s.run_id "
                    "WHERE r.job_id = ? AND s.case_index = ? AND s.metric = 0 ORDER BY s.iteration",
                    (first["id"], index))]
                self.assertEqual(len(vals), ITER)
                medians[case_id] = statistics.median(vals)
        finally:
            db.close()
        csv = self.lab.cli("export", str(first["id"]), "--format", "ops-csv").stdout.splitlines()
        self.assertEqual(csv[0], "id,instructions")
        exported = {int(l.split(",")[0]): float(l.split(",")[1]) for l in csv[1:]}
        self.assertEqual(exported, {k: float(v) for k, v in medians.items()})

        with open(os.path.join(self.lab.out_dir, "show.txt"), "w") as f:
            f.write(self.lab.cli("show", str(first["id"])).stdout)


@unittest.skipUnless(lablib.AN500_ELF and os.path.exists(lablib.AN500_ELF),
                     "the an500 runner firmware was not built (arm-none-eabi-gcc missing)")
class CortexM7QemuLabTest(unittest.TestCase):
    """The emulated Cortex-M7 board kind (QEMU mps2-an500, the an500 port) through the real lab."""

    def test_conv2d_sweep_on_the_m7(self):
        with lablib.Lab("m7-lab", [lablib.an500_board()]) as lab:
            boards = lab.cli_json("boards")
            self.assertEqual([b["kind"] for b in boards], ["cm7-qemu"])
            csv = lablib.write_csv(lab.home, "sweep.csv", SWEEP)
            res = lab.cli_json("submit", "--kind", "cm7-qemu", "--op", "conv2d_s8", "--cases", csv,
                               "--iterations", "3", "--wait", timeout=600)
            self.assertEqual(res["state"], "succeeded", res.get("message"))
            prov = res["provenance"]
            self.assertTrue(prov["emulated"])
            self.assertEqual(prov["cpu"], "cortex-m7")
            self.assertEqual(prov["port"], "an500")
            self.assertIn("mps2-an500", prov["note"])
            for c in res["cases"]:
                self.assertTrue(c["checksum_ok"], f"case {c['id']}: checksum not verified")
                self.assertEqual(len(set(c["samples"])), 1, "emulated counts must repeat exactly")


if __name__ == "__main__":
    unittest.main(verbosity=2)
