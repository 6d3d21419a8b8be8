"""Integration, scheduling: reservations with leases, --hold, fair share, maintenance, board history,
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

    def test_a_job_waiting_on_a_reservation_says_so_and_release_names_the_job_it_went_to(self):
        bob = self.lab.add_user("bob", "member")
        self.lab.cli("reserve", "host-0", "--for", "1h", "--note", "calibrating")
        try:
            sub = self.lab.cli("submit", "--board", "host-0", "--op", "fully_connected_s8",
                               "--cases", self.fc, "--iterations", "1", token=bob)
            jid = sub.stdout.strip()
            self.assertIn("waiting for board host-0, reserved by admin until", sub.stderr)
            self.assertNotIn("queue position 0", sub.stderr)
            show = self.lab.cli("show", jid).stdout
            # The board asked for, not "-"; what it waits for and until when.
            self.assertIn(f"job {jid}  queued  fully_connected_s8 on host-0 (host)", show)
            self.assertIn("waiting: next in the queue; waiting for board host-0, reserved by admin "
                          "until ", show)
            self.assertIn("(calibrating); estimated start", show)
            self.assertIn("priority normal, 1 case x 1 iteration", show)
            row = next(l for l in self.lab.cli("jobs").stdout.splitlines()
                       if l.split()[0] == jid)
            self.assertIn("host-0", row)
            listed = next(j for j in self.lab.cli_json("jobs")["jobs"] if str(j["id"]) == jid)
            self.assertEqual(listed["board"], "host-0")
            self.assertEqual(listed["wait"]["position"], 1)
            shown = self.lab.cli_json("show", jid)
            self.assertEqual(shown["wait"]["holder"], "admin")
            self.assertEqual(shown["board"], "host-0")
        finally:
            released = self.lab.cli("release", "host-0")
        # Released, and the board went at once to the job that waited for it: the line says so
        # instead of a bare "busy".
        self.assertIn(f"released host-0; it now runs job {jid}", released.stdout)
        self.assertEqual(self.lab.wait_job(jid)["state"], "succeeded")
        # The board's history names the job of each run, not a bare run id.
        reasons = [t["reason"] for t in self.history() if t["field"] == "state"]
        self.assertTrue(any(r.startswith(f"job {jid} (run ") for r in reasons), reasons)

    def test_reservation_expires_on_time(self):
        r = self.lab.cli_json("reserve", "host-0", "--for", "2s", "--note", "short one")
        self.assertEqual(r["holder"], "admin")
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
            self.assertEqual(b["holder"], "admin")
            self.assertTrue(b["hold"])
            hold.p.send_signal(signal.SIGINT)
            self.assertEqual(hold.p.wait(30), 0)
            hold.wait_for("released host-0")
        finally:
            hold.stop()
        self.assertEqual(self.board()["holder"], "")
        released = [t for t in self.history() if t["field"] == "reservation" and t["to"] == ""]
        self.assertIn("released by admin", released[-1]["reason"])

    def test_hold_lease_runs_out_when_the_process_is_killed(self):
        hold = self.lab.cli_popen("reserve", "host-0", "--hold", "--lease", "1500ms")
        try:
            hold.wait_for("holding host-0")
            self.assertEqual(self.board()["holder"], "admin")
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
        r = self.lab.cli("board", "host-0", "--maintenance", "off")
        self.assertIn("health unknown", r.stdout)
        # Back from maintenance through a health check (a job of the user "lab"), then the job.
        res = self.lab.cli_json("submit", "--board", "host-0", "--op", "fully_connected_s8",
                                "--cases", self.fc, "--iterations", "1", "--wait")
        self.assertEqual(res["state"], "succeeded")
        checks = self.lab.cli_json("jobs", "--user", "lab")["jobs"]
        self.assertTrue(checks)
        self.assertEqual(checks[0]["label"], "health check of host-0")
        self.assertEqual(checks[0]["state"], "succeeded")
        text = self.lab.cli("board", "host-0", "--history").stdout
        self.assertIn("maintenance -> unknown", text)
        self.assertIn("rewiring", text)
        self.assertIn("unknown -> good", text)


class BoardOwnerTest(unittest.TestCase):
    """An admin gives a board to another agent with `mculab board BOARD --agent NAME`."""

    def test_the_board_goes_offline_until_its_new_agent_registers_it(self):
        with lablib.Lab("sched-owner", [lablib.host_board("host-0")]) as lab:
            bob = lab.add_user("bob", "member")
            r = lab.cli("board", "host-0", "--agent", "lab-2", token=bob, check=False)
            self.assertEqual(r.returncode, 1)
            self.assertIn("giving a board to an agent needs the admin role", r.stderr)
            # A new board's first health check may still run on it: a busy board is refused
            # (giving it away waits for the job to end), which is not what this test is about.
            wait_until("host-0 is idle", lambda: not next(
                b for b in lab.cli_json("boards") if b["name"] == "host-0").get("current_job"))
            r = lab.cli("board", "host-0", "--agent", "lab-2")
            self.assertIn("board host-0 now belongs to agent lab-2 (offline)", r.stdout)
            board = next(b for b in lab.cli_json("boards") if b["name"] == "host-0")
            self.assertEqual((board["agent"], board["state"]), ("lab-2", "offline"))
            history = lab.cli_json("board", "host-0", "--history")
            self.assertIn("offline", [t["to"] for t in history])


class FairShareTest(unittest.TestCase):
    """With user A's 20 jobs queued behind A's running one, user B's single job runs next."""

    def test_a_single_job_runs_before_twenty_queued(self):
        # A slow fake board keeps alice's first job running while everything else is queued; an
        # admin then cancels it, and the next job to run must be bob's.
        with lablib.Lab("sched-fair", [lablib.fake_board("fake-0", sample_delay_ms=200)]) as lab:
            fc = lablib.write_csv(lab.home, "fc.csv", FC_CSV)
            a = lab.add_user("alice", "member")
            b = lab.add_user("bob", "member")
            sub = ["submit", "--kind", "fake", "--op", "fully_connected_s8", "--cases", fc, "--warmup", "0"]
            first = lab.cli(*sub, "--iterations", "1000", token=a).stdout.strip()
            wait_until("alice's first job runs", lambda: lab.cli_json(
                "show", first)["state"] in ("preparing", "running"))
            alice = [lab.cli(*sub, "--iterations", "1", token=a).stdout.strip()
                     for _ in range(20)]
            bobs = lab.cli(*sub, "--iterations", "1", token=b).stdout.strip()
            lab.cli("cancel", first)  # the admin's token
            res = lab.cli_json("submit", "--kind", "fake", "--op", "fully_connected_s8", "--cases",
                               fc, "--iterations", "1", "--wait", token=b, timeout=120)
            self.assertEqual(res["state"], "succeeded")
            for jid in alice:
                lab.wait_job(jid)
            jobs = {j["id"]: j for j in lab.cli_json("jobs", "--limit", "100")["jobs"]}
            bob_job = jobs[int(bobs)]
            self.assertEqual(bob_job["state"], "succeeded")
            self.assertLess(max(int(j) for j in alice), int(bobs))  # all of alice's came first
            for jid in alice:
                j = jobs[int(jid)]
                self.assertEqual(j["state"], "succeeded")
                self.assertGreaterEqual(j["started_ms"], bob_job["started_ms"],
                                        f"alice's job {jid} started before bob's {bobs}")


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
            checks = lab.cli_json("jobs", "--user", "lab")["jobs"]
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
