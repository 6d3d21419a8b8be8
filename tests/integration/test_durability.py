"""Integration, durability: real mculab-server and mculab-agent processes, fake boards
slowed down so that the agent or the server can be killed mid-run. After each kill the job must
complete and every sample of its successful run must be stored exactly once (read from the lab's
SQLite, read-only)."""
import contextlib
import os
import signal
import sqlite3
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import lablib  # noqa: E402

# 3 cases x 150 iterations, 5 ms per sample: a run takes about 2.3 s, long enough to kill it
# half-way and short enough to keep each test well under a minute.
CASES = 3
ITERATIONS = 150
DELAY_MS = 5
FC_CSV = "id,batch,input_size,output_size\n0,1,16,8\n1,1,32,8\n2,2,16,4\n"


@contextlib.contextmanager
def db(lab):
    """A read-only connection to the lab's SQLite (WAL: readers never block the server)."""
    c = sqlite3.connect(f"file:{lab.db_path}?mode=ro", uri=True, timeout=10)
    try:
        yield c
    finally:
        c.close()


def wait_for_samples(lab, run_id, at_least=1, timeout=30):
    """Polls the store (bounded) until the run has committed samples: batches were acknowledged."""
    deadline = time.monotonic() + timeout
    while True:
        with db(lab) as c:
            n = c.execute("SELECT COUNT(*) FROM samples WHERE run_id = ?", (run_id,)).fetchone()[0]
        if n >= at_least:
            return n
        if time.monotonic() > deadline:
            raise AssertionError(f"run {run_id} stored no samples within {timeout}s")
        time.sleep(0.05)


def job_row(lab, job_id):
    with db(lab) as c:
        return c.execute("SELECT state, attempts, last_run_id, assigned_board FROM jobs WHERE id = ?",
                         (job_id,)).fetchone()


class DurabilityTest(unittest.TestCase):
    def submit(self, lab):
        csv = lablib.write_csv(lab.home, "fc.csv", FC_CSV)
        res = lab.cli_json("submit", "--kind", "fake", "--op", "fully_connected_s8", "--cases", csv,
                           "--iterations", str(ITERATIONS), "--warmup", "0", "--label", "durability")
        return res["id"]

    def assert_every_sample_once(self, lab, job_id):
        """The job succeeded; its run has each (pass, case, iteration, metric) exactly once, the
        full product of cases x iterations x metrics, and the statistics' n match."""
        state, attempts, run_id, board = job_row(lab, job_id)
        self.assertEqual(state, "succeeded")
        with db(lab) as c:
            dups = c.execute(
                "SELECT COUNT(*) FROM (SELECT pass, case_index, iteration, metric, COUNT(*) AS k "
                "FROM samples WHERE run_id = ? GROUP BY 1, 2, 3, 4 HAVING k > 1)",
                (run_id,)).fetchone()[0]
            self.assertEqual(dups, 0, "a sample was stored twice")
            metrics = [m for (m,) in c.execute(
                "SELECT DISTINCT metric FROM samples WHERE run_id = ? ORDER BY 1", (run_id,))]
            self.assertEqual(metrics, list(range(len(metrics))))
            total = c.execute("SELECT COUNT(*) FROM samples WHERE run_id = ?", (run_id,)).fetchone()[0]
            self.assertEqual(total, CASES * ITERATIONS * len(metrics))
            keys = set(c.execute("SELECT case_index, iteration FROM samples WHERE run_id = ? AND "
                                 "metric = 0", (run_id,)))
            self.assertEqual(keys, {(k, i) for k in range(CASES) for i in range(ITERATIONS)})
            stats = c.execute("SELECT case_index, metric_index, n, run_id FROM case_stats "
                              "WHERE job_id = ?", (job_id,)).fetchall()
            self.assertEqual(len(stats), CASES * len(metrics))
            for case_index, metric_index, n, stats_run in stats:
                self.assertEqual(n, ITERATIONS, (case_index, metric_index))
                self.assertEqual(stats_run, run_id)
        return attempts, run_id, board

    def test_kill_9_agent_mid_run_requeues_the_job_on_another_board(self):
        with lablib.Lab("durab-agent-kill",
                        [lablib.fake_board("fake-a", sample_delay_ms=DELAY_MS)]) as lab:
            job = self.submit(lab)
            lab.agent.wait_for(f"job {job} assigned to fake-a")
            lab.add_agent("durab-b", [lablib.fake_board("fake-b", sample_delay_ms=DELAY_MS)])
            first_run = job_row(lab, job)[2]
            wait_for_samples(lab, first_run)
            lab.kill_agent(signal.SIGKILL)
            res = lab.wait_job(job)
            self.assertEqual(res["state"], "succeeded", res.get("message"))
            attempts, run_id, board = self.assert_every_sample_once(lab, job)
            self.assertEqual(board, "fake-b")
            self.assertEqual(attempts, 2)
            self.assertNotEqual(run_id, first_run)
            for c in res["cases"]:
                self.assertEqual(c["n"], ITERATIONS)
            with db(lab) as c:
                state, message = c.execute("SELECT state, message FROM runs WHERE id = ?",
                                           (first_run,)).fetchone()
                health = c.execute("SELECT health FROM boards WHERE name = 'fake-a'").fetchone()[0]
            self.assertEqual(state, "infra_failed")
            self.assertIn("disconnected", message)
            self.assertEqual(health, "unknown")

    def test_kill_9_server_mid_run_resumes_the_run_after_restart(self):
        with lablib.Lab("durab-server-kill",
                        [lablib.fake_board("fake-0", sample_delay_ms=DELAY_MS)]) as lab:
            job = self.submit(lab)
            lab.agent.wait_for(f"job {job} assigned to fake-0")
            first_run = job_row(lab, job)[2]
            before = wait_for_samples(lab, first_run)
            mark = len(lab.agent.lines)
            lab.restart_server(signal.SIGKILL)
            lab.agent.wait_for("re-registered with", start=mark)
            res = lab.wait_job(job)
            self.assertEqual(res["state"], "succeeded", res.get("message"))
            attempts, run_id, board = self.assert_every_sample_once(lab, job)
            # The same run went on: nothing was requeued or measured twice.
            self.assertEqual(run_id, first_run)
            self.assertEqual(attempts, 1)
            self.assertEqual(board, "fake-0")
            self.assertGreater(CASES * ITERATIONS, before)
            lab.server.wait_for(f"run {first_run} (job {job}) on board fake-0 resumed")

    def test_sigterm_agent_restart_loses_nothing_acknowledged(self):
        with lablib.Lab("durab-agent-restart",
                        [lablib.fake_board("fake-0", sample_delay_ms=DELAY_MS)]) as lab:
            job = self.submit(lab)
            lab.agent.wait_for(f"job {job} assigned to fake-0")
            first_run = job_row(lab, job)[2]
            wait_for_samples(lab, first_run)
            with db(lab) as c:
                acked = set(c.execute("SELECT pass, case_index, iteration, metric, value FROM samples "
                                      "WHERE run_id = ?", (first_run,)))
            lab.restart_agent(signal.SIGTERM)
            res = lab.wait_job(job)
            self.assertEqual(res["state"], "succeeded", res.get("message"))
            attempts, run_id, _ = self.assert_every_sample_once(lab, job)
            self.assertNotEqual(run_id, first_run)
            # One retry: the stopping agent said so first, so its board got no new run meanwhile.
            self.assertEqual(attempts, 2)
            with db(lab) as c:
                kept = c.execute("SELECT pass, case_index, iteration, metric, value FROM samples "
                                 "WHERE run_id = ?", (first_run,)).fetchall()
            # Everything acknowledged before the restart is still there, once.
            self.assertTrue(acked.issubset(set(kept)))
            self.assertEqual(len(kept), len(set(kept)))
            # The agent's spool is empty once the server has closed both runs.
            spool = os.path.join(lab.home, "spool", "runs")
            deadline = time.monotonic() + 20
            while os.path.isdir(spool) and os.listdir(spool) and time.monotonic() < deadline:
                time.sleep(0.05)
            self.assertFalse(os.path.isdir(spool) and os.listdir(spool), "spool not emptied")


if __name__ == "__main__":
    unittest.main()
