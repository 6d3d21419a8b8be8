"""End to end, counters and passes: emulated events on a QEMU board, planned into passes, checked against the
calibration loops' known instruction mix (firmware_stub/include/mculab/ops.h), with per-op
profiles and the memory report in `mculab show`."""
import os
import sqlite3
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import lablib  # noqa: E402

# Calibration loops: kind 0 (alu: subs; bne) and kind 2 (mve), 1000 and 3000 passes each.
CASES = "id,kind,loops\n0,0,1000\n1,0,3000\n2,2,1000\n3,2,3000\n"
EVENTS = ["instructions", "loads", "stores", "branches", "mve_instructions"]
# Per pass of each loop, on the Cortex-M55 (ops.h): instructions, loads, stores, branches, MVE.
MIX = {0: [2, 0, 0, 1, 0], 2: [6, 12, 4, 1, 4]}
ITER = 3


@unittest.skipUnless(lablib.AN547_ELF and os.path.exists(lablib.AN547_ELF)
                     and lablib.QEMU_PLUGIN and os.path.exists(lablib.QEMU_PLUGIN),
                     "the an547 runner firmware or the QEMU plugin was not built")
class QemuEventsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.lab = lablib.Lab("qemu-events", [lablib.qemu_board()])
        cls.lab.__enter__()
        cls.csv = lablib.write_csv(cls.lab.home, "calibrate.csv", CASES)

    @classmethod
    def tearDownClass(cls):
        cls.lab.close()

    def submit(self, events):
        return self.lab.cli_json("submit", "--kind", "corstone300-qemu", "--op", "calibrate",
                                 "--cases", self.csv, "--iterations", str(ITER), "--warmup", "1",
                                 "--events", ",".join(events), "--wait", timeout=600)

    def test_events_lists_the_plugin_unit(self):
        out = self.lab.cli("events", "--kind", "corstone300-qemu").stdout
        self.assertIn("qemu-plugin", out)
        self.assertIn("EMULATED", out)
        self.assertIn("mve_instructions", out)

    def test_an_event_the_board_cannot_count_is_rejected_listing_what_it_can(self):
        r = self.lab.cli("submit", "--kind", "corstone300-qemu", "--op", "calibrate", "--cases",
                         self.csv, "--events", "npu_active", check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("npu_active", r.stderr)
        self.assertIn("instructions", r.stderr)

    def test_five_emulated_events_in_planned_passes_match_the_known_loops(self):
        job = self.submit(EVENTS)
        self.assertEqual(job["state"], "succeeded", job.get("message"))
        self.assertNotIn("disagree", job["message"])
        # The plugin counts 3 events at once: 5 events take 2 passes, cycles in each.
        passes = [p["events"] for p in job["passes"]]
        self.assertEqual(passes, [["cycles", "instructions", "loads", "stores"],
                                  ["cycles", "branches", "mve_instructions"]])
        self.assertTrue(job["provenance"]["emulated"])

        db = sqlite3.connect(f"file:{self.lab.db_path}?mode=ro", uri=True)
        try:
            run = db.execute("SELECT last_run_id FROM jobs WHERE id = ?", (job["id"],)).fetchone()[0]
            counters = db.execute("SELECT counters FROM runs WHERE id = ?", (run,)).fetchone()[0]
            self.assertEqual(counters.split(","), EVENTS)

            def values(pass_, case, metric):
                return [v for (v,) in db.execute(
                    "SELECT value FROM samples WHERE run_id = ? AND pass = ? AND case_index = ? "
                    "AND metric = ? ORDER BY iteration", (run, pass_, case, metric))]

            for case in range(4):
                # The passes agree on cycles exactly (the emulator is deterministic).
                c0, c1 = values(0, case, 0), values(1, case, 0)
                self.assertEqual(len(c0), ITER)
                self.assertEqual(c0, c1, f"case {case}: passes disagree on cycles")
                # Every event in exactly one pass, identical over the iterations after the first
                # (the runner's op profiler does its first-invocation bookkeeping inside the first
                # measured iteration: a few stores more).
                for m in range(1, 6):
                    counted = [p for p in (0, 1) if values(p, case, m)]
                    self.assertEqual(len(counted), 1, f"case {case} event {EVENTS[m - 1]}")
                    v = values(counted[0], case, m)
                    self.assertEqual(len(set(v[1:])), 1, f"case {case}: {EVENTS[m - 1]} varies: {v}")

            # Independent count: 3000 passes minus 1000 passes = 2000 x the loop's mix, exactly.
            for kind, (short, long_) in ((0, (0, 1)), (2, (2, 3))):
                for m, event in enumerate(EVENTS, start=1):
                    p = 0 if m <= 3 else 1
                    diff = values(p, long_, m)[-1] - values(p, short, m)[-1]
                    self.assertEqual(diff, 2000 * MIX[kind][m - 1],
                                     f"kind {kind} {event}: {diff} != 2000 x {MIX[kind][m - 1]}")

            ops = db.execute("SELECT COUNT(*) FROM op_profiles WHERE run_id = ?", (run,)).fetchone()[0]
            self.assertGreater(ops, 0, "no per-op profile stored")
            elf = dict(db.execute("SELECT category, used FROM memory_reports WHERE run_id = ? "
                                  "AND source = 'elf'", (run,)).fetchall())
            self.assertGreater(elf["flash.text"], 0)
            self.assertGreater(elf["ram.stack"], 0)
        finally:
            db.close()

        # A repeat gives bit-identical events.
        again = self.submit(EVENTS)
        self.assertEqual(again["state"], "succeeded", again.get("message"))
        key = lambda e: (e["case"], e["event"])  # noqa: E731
        self.assertEqual(sorted(((key(e), e["median"], e["min"], e["max"]) for e in job["events"])),
                         sorted(((key(e), e["median"], e["min"], e["max"]) for e in again["events"])))

        show = self.lab.cli("show", str(job["id"])).stdout
        self.assertIn("EMULATED", show)
        self.assertIn("events (EMULATED", show)
        self.assertIn("mve_instructions", show)
        self.assertIn("memory (EMULATED", show)
        self.assertIn("flash.text", show)
        self.assertIn("arena", show)
        ops = self.lab.cli("show", str(job["id"]), "--ops").stdout
        self.assertIn("CALIBRATE", ops)
        self.assertIn("%", ops)
        self.assertIn("EMULATED", ops)
        self.assertIn("instructions", ops)
        with open(os.path.join(self.lab.out_dir, "show_events.txt"), "w") as f:
            f.write(show + "\n" + ops)


if __name__ == "__main__":
    unittest.main(verbosity=2)
