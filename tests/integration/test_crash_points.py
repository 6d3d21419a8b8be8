"""Integration: the server ends abruptly (_exit 77) at a named crash point (common/crash_point.h:
before or after a commit, before or after it sends an Assignment, an acknowledgement or a
RunClosed, before it answers a submit), is restarted, and the lab must recover with a real agent and
host board: every job reaches a final state, every sample of a succeeded run is stored exactly once,
every run the agent was assigned is in the database under the job it was assigned for (nothing was
said before it was committed), no run id names two jobs, and the agent's spool empties.

The same for the agent: it ends abruptly at one of its points (after spooling a batch, before or
after writing a message to the server, after a RunClosed before dropping the run's spool, mid-run
at the end of a case) and is restarted on the same spool; every job must reach a final state with
its samples stored exactly once, and the spool must empty.

Needs programs built with -DMCULAB_CRASH_POINTS=ON (skipped otherwise). Seeded: trial i crashes
at point i mod (number of points), on the pass the seed picks; MCULAB_CRASH_TRIALS sets how many
server trials run (default 20), MCULAB_AGENT_CRASH_TRIALS how many agent trials (default 10)."""
import os
import random
import re
import signal
import sqlite3
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import lablib  # noqa: E402

# Every point of common/crash_point.h (a cancel point is reached only when the cancelled job is
# still on the board).
POINTS = ["before-commit", "after-commit", "before-send-assignment", "after-send-assignment",
          "before-send-ack", "after-send-ack", "before-send-run-closed", "after-send-run-closed",
          "before-send-cancel", "after-send-cancel", "before-reply"]
TRIALS = int(os.environ.get("MCULAB_CRASH_TRIALS", "20"))
# Every agent point of common/crash_point.h, with the highest pass a trial picks (a run's end is
# passed once per job, a case end twice, messages and batches many times).
AGENT_POINTS = [("agent-after-spool-batch", 3), ("agent-before-send", 15),
                ("agent-after-send", 15), ("agent-after-run-closed", 3), ("agent-mid-run", 5)]
AGENT_TRIALS = int(os.environ.get("MCULAB_AGENT_CRASH_TRIALS", "10"))
JOBS = 3
ITERATIONS = 300
LAST_ITERATIONS = 100_000  # the cancelled job: long enough to be on the board when cancelled
FC_CSV = "id,batch,input_size,output_size\n0,1,16,8\n1,1,32,8\n"
CASES = 2
FINAL = ("succeeded", "failed", "cancelled", "timed_out")
CRASH_EXIT = 77


class CrashLab(lablib.Lab):
    """A Lab whose server runs with MCULAB_CRASH_AT while crash_at is set."""
    crash_at = None

    def start_server(self):
        self._make_accounts()
        env = dict(os.environ)
        env.pop("MCULAB_CRASH_AT", None)
        if self.crash_at:
            env["MCULAB_CRASH_AT"] = self.crash_at
        self.server = lablib.Proc(
            "mculab-server",
            [os.path.join(lablib.BIN, "mculab-server"), "--home", self.home, "--grpc-listen",
             self.address, "--http-listen", f"127.0.0.1:{self.http_port}"],
            os.path.join(self.out_dir, "server.log"), env=env)
        try:
            self.server.wait_for("mculab-server ready")
        except AssertionError:
            if self.server.p.poll() != CRASH_EXIT:
                raise

    def crashed(self):
        return self.server.p.poll() == CRASH_EXIT

    def recover(self):
        """Restarts the crashed server without the hook."""
        self.crash_at = None
        self.server.stop()
        self.start_server()


def query(lab, sql, args=()):
    c = sqlite3.connect(f"file:{lab.db_path}?mode=ro", uri=True, timeout=10)
    try:
        return c.execute(sql, args).fetchall()
    finally:
        c.close()


class CrashPointTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if os.environ.get("MCULAB_CRASH_POINTS") != "ON":
            raise unittest.SkipTest("the server has no crash points: configure the build with "
                                    "-DMCULAB_CRASH_POINTS=ON to run this test")

    def test_seeded_crash_trials_recover_every_job_and_sample(self):
        crashed = {}
        for seed in range(TRIALS):
            with self.subTest(seed=seed):
                point = POINTS[seed % len(POINTS)]
                # Commits are many (every change, every sample batch): reach into the run.
                high = 15 if point.endswith("commit") else 3
                count = random.Random(seed).randint(1, high)
                if crashed_at := self.trial(seed, point, count):
                    crashed[seed] = crashed_at
        print(f"crash trials: {len(crashed)} of {TRIALS} crashed: {crashed}", file=sys.stderr)
        # Most points are passed more than three times per trial: a hook that never fires would
        # make this suite prove nothing.
        self.assertGreaterEqual(len(crashed), TRIALS // 2)

    def trial(self, seed, point, count):
        lab = CrashLab(f"crash-{seed}", [lablib.host_board("host-0")])
        lab.crash_at = f"{point}:{count}"
        crashed_at = None
        try:
            lab.start_server()
            if lab.crashed():
                crashed_at = f"{point}:{count} (start)"
                lab.recover()
            lab.agent = lablib.Proc("mculab-agent", [os.path.join(lablib.BIN, "mculab-agent"),
                                                     "--config", lab.agent_config()],
                                    os.path.join(lab.out_dir, "agent.log"))
            deadline = time.monotonic() + 60
            while not any("mculab-agent ready" in line for line in lab.agent.lines):
                if lab.crashed():  # the agent's registration was the crash point
                    crashed_at = f"{point}:{count} (registration)"
                    lab.recover()
                self.assertIsNone(lab.agent.p.poll(), "the agent exited")
                self.assertLess(time.monotonic(), deadline, "the agent never registered")
                time.sleep(0.05)
            csv = lablib.write_csv(lab.home, "fc.csv", FC_CSV)
            answered = []  # jobs whose submit was answered: they must exist
            for i in range(JOBS):
                while True:
                    r = lab.cli("submit", "--kind", "host", "--op", "fully_connected_s8", "--cases",
                                csv, "--iterations",
                                str(LAST_ITERATIONS if i == JOBS - 1 else ITERATIONS), "--warmup", "0", "--label",
                                f"crash-{seed}-{i}", "--json", check=False)
                    if r.returncode == 0:
                        answered.append(int(re.search(r'"id":\s*(\d+)', r.stdout).group(1)))
                        break
                    # Refused, or the server died before answering: whether the job exists is
                    # the database's to say; submit again once a server is back.
                    self.wait_crash_or_serving(lab)
                    if lab.crashed():
                        crashed_at = f"{point}:{count}"
                        lab.recover()
                    if any(label == f"crash-{seed}-{i}" for (label,) in
                           query(lab, "SELECT label FROM jobs")):
                        break
            # The last job is cancelled (it may have finished already: then it stays succeeded).
            last = query(lab, "SELECT id FROM jobs WHERE label = ?", (f"crash-{seed}-{JOBS - 1}",))[0][0]
            while True:
                r = lab.cli("cancel", str(last), check=False)
                if r.returncode == 0 or "already" in r.stderr + r.stdout:
                    break
                self.wait_crash_or_serving(lab)
                if lab.crashed():
                    crashed_at = f"{point}:{count}"
                    lab.recover()
            deadline = time.monotonic() + 90
            while True:
                if lab.crashed():
                    crashed_at = f"{point}:{count}"
                    lab.recover()
                states = query(lab, "SELECT id, state FROM jobs")
                if states and all(s in FINAL for _, s in states):
                    break
                self.assertLess(time.monotonic(), deadline, f"jobs not final: {states}")
                time.sleep(0.1)
            if self.check(lab, answered, last):
                crashed_at = f"{point}:{count} (after the jobs ended)"
            return crashed_at
        finally:
            lab.close()

    def wait_crash_or_serving(self, lab):
        deadline = time.monotonic() + 30
        while not lab.crashed():
            if lab.cli("boards", check=False).returncode == 0:
                return
            self.assertLess(time.monotonic(), deadline, "server neither crashed nor serving")
            time.sleep(0.1)

    def check(self, lab, answered, last, agent_lines=None):
        """Checks the recovered lab; true when the server crashed meanwhile (and was restarted).
        `agent_lines`: the output of every agent process of the trial (default: the one agent)."""
        jobs = {j: (state, run, label) for j, state, run, label in
                query(lab, "SELECT id, state, last_run_id, label FROM jobs")}
        for j in answered:
            self.assertIn(j, jobs, f"job {j} was answered but is not stored")
        for j, (state, run, label) in jobs.items():
            if not label.startswith("crash-"):
                continue  # a health check after an agent was lost
            if j == last and state == "cancelled":
                continue
            self.assertEqual(state, "succeeded", f"job {j}")
            dups = query(lab, "SELECT COUNT(*) FROM (SELECT pass, case_index, iteration, metric, "
                              "COUNT(*) AS k FROM samples WHERE run_id = ? GROUP BY 1, 2, 3, 4 "
                              "HAVING k > 1)", (run,))[0][0]
            self.assertEqual(dups, 0, f"job {j}: a sample stored twice")
            keys = set(query(lab, "SELECT case_index, iteration FROM samples WHERE run_id = ? AND "
                                  "metric = 0", (run,)))
            n = LAST_ITERATIONS if j == last else ITERATIONS
            self.assertEqual(keys, {(c, i) for c in range(CASES) for i in range(n)},
                             f"job {j}: samples missing")
        # Every Assignment the agent received names a committed run of that job; no run id twice.
        runs = dict(query(lab, "SELECT id, job_id FROM runs"))
        assigned = {}
        for line in (agent_lines() if agent_lines else lab.agent.lines):
            m = re.search(r"run (\d+): job (\d+) assigned to", line)
            if m:
                run, job = int(m.group(1)), int(m.group(2))
                self.assertEqual(assigned.setdefault(run, job), job, f"run id {run} reused")
                self.assertEqual(runs.get(run), job, f"run {run} was assigned but not stored")
        self.assertTrue(assigned)
        # The agent drops a run's spool when told the run is closed: once the server is back.
        crashed = False
        spool = os.path.join(lab.home, "spool", "runs")
        deadline = time.monotonic() + 20
        while os.path.isdir(spool) and os.listdir(spool) and time.monotonic() < deadline:
            if lab.crashed():
                crashed = True
                lab.recover()
            time.sleep(0.05)
        self.assertFalse(os.path.isdir(spool) and os.listdir(spool), "spool not emptied")
        return crashed


class AgentCrashPointTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if os.environ.get("MCULAB_CRASH_POINTS") != "ON":
            raise unittest.SkipTest("the agent has no crash points: configure the build with "
                                    "-DMCULAB_CRASH_POINTS=ON to run this test")

    def test_seeded_agent_crash_trials_recover_every_job_and_sample(self):
        crashed = {}
        for seed in range(AGENT_TRIALS):
            with self.subTest(seed=seed):
                point, high = AGENT_POINTS[seed % len(AGENT_POINTS)]
                count = random.Random(1000 + seed).randint(1, high)
                if self.trial(seed, point, count):
                    crashed[seed] = f"{point}:{count}"
        print(f"agent crash trials: {len(crashed)} of {AGENT_TRIALS} crashed: {crashed}",
              file=sys.stderr)
        self.assertGreaterEqual(len(crashed), AGENT_TRIALS // 2)

    def trial(self, seed, point, count):
        """Runs JOBS jobs with an agent armed to crash at `point`; true when it crashed."""
        lab = CrashLab(f"agent-crash-{seed}", [lablib.host_board("host-0")])
        agents = []

        def start_agent(crash_at):
            env = dict(os.environ)
            env.pop("MCULAB_CRASH_AT", None)
            if crash_at:
                env["MCULAB_CRASH_AT"] = crash_at
            lab.agent = lablib.Proc(
                "mculab-agent", [os.path.join(lablib.BIN, "mculab-agent"), "--config",
                                 lab.agent_config()],
                os.path.join(lab.out_dir, "agent.log"), env=env)
            agents.append(lab.agent)

        def agent_crashed():
            return lab.agent.p.poll() == CRASH_EXIT

        def lines():
            return [line for a in agents for line in a.lines]

        crashed = False
        try:
            lab.start_server()
            start_agent(f"{point}:{count}")
            deadline = time.monotonic() + 60
            while not any("mculab-agent ready" in line for line in lab.agent.lines):
                self.assertIn(lab.agent.p.poll(), (None, CRASH_EXIT), "the agent exited")
                if agent_crashed():
                    crashed = True
                    start_agent(None)
                self.assertLess(time.monotonic(), deadline, "the agent never registered")
                time.sleep(0.05)
            csv = lablib.write_csv(lab.home, "fc.csv", FC_CSV)
            answered = []
            for i in range(JOBS):
                r = lab.cli("submit", "--kind", "host", "--op", "fully_connected_s8", "--cases",
                            csv, "--iterations", str(ITERATIONS), "--warmup", "0", "--label",
                            f"crash-{seed}-{i}", "--json")
                answered.append(int(re.search(r'"id":\s*(\d+)', r.stdout).group(1)))
            deadline = time.monotonic() + 120
            while True:
                if agent_crashed():
                    crashed = True
                    lab.agent.stop()
                    start_agent(None)  # the same config, so the same spool
                self.assertIn(lab.agent.p.poll(), (None, CRASH_EXIT), "the agent exited")
                states = query(lab, "SELECT id, state FROM jobs")
                if states and all(s in FINAL for _, s in states) and not agent_crashed():
                    break
                self.assertLess(time.monotonic(), deadline, f"jobs not final: {states}")
                time.sleep(0.1)
            # A crash after the last RunClosed leaves the run's spool: the restarted agent
            # replays it and the server closes it again.
            spool = os.path.join(lab.home, "spool", "runs")
            deadline = time.monotonic() + 30
            while agent_crashed() or (os.path.isdir(spool) and os.listdir(spool)):
                if agent_crashed():
                    crashed = True
                    lab.agent.stop()
                    start_agent(None)
                if time.monotonic() > deadline:
                    break  # check() says what is left
                time.sleep(0.05)
            CrashPointTest.check(self, lab, answered, None, agent_lines=lines)
            if agent_crashed():
                crashed = True
            return crashed
        finally:
            lab.close()
            for a in agents[:-1]:
                a.stop()


if __name__ == "__main__":
    unittest.main()
