"""Integration: the server's home on a small tmpfs that fills up while a job runs. The server must
say so clearly (a critical log line naming the failed write, and UNAVAILABLE with the reason to
every client), stop accepting work (fail-stop) rather than let memory and disk drift apart, leave
a database that passes PRAGMA integrity_check, and recover when space returns and it is
restarted: everything committed before is there, the job the agent was running completes from the
agent's spool, and new jobs run.

Needs to mount a tmpfs (root, outside a chroot or a locked-down container): skipped otherwise, with
the reason."""
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import lablib  # noqa: E402

# Room for the long job's 2 M samples once the filler is gone: after the restart the agent replays
# every sample it spooled while the server was stopped, and they must fit then.
SIZE = "256m"
FC_CSV = "id,batch,input_size,output_size\n0,1,16,8\n1,1,32,8\n"
CASES = 2
LONG_CSV = "id,batch,input_size,output_size\n" + "".join(
    f"{i},1,{16 + 16 * (i % 4)},8\n" for i in range(20))


def query(path, sql, args=()):
    c = sqlite3.connect(path, timeout=10)
    try:
        return c.execute(sql, args).fetchall()
    finally:
        c.close()


# Free space left before the long job starts: far less than its 2 M samples take (well over 20 MB
# in the database), so the disk fills while it runs however fast the server ingests.
HEADROOM = 8 << 20


def free_bytes(directory):
    st = os.statvfs(directory)
    return st.f_bavail * st.f_frsize


def fill(directory, name="filler", leave=0):
    """Writes a file in `directory` until the file system has at most `leave` bytes free (0: until
    it is full); returns its path. Unbuffered writes, so that nothing is left pending to fail at
    close."""
    path = os.path.join(directory, name)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        if leave > 0:
            chunk = b"\xa5" * (1 << 20)
            while free_bytes(directory) - len(chunk) > leave:
                os.write(fd, chunk)
            return path
        # Big pieces, then whatever is left in smaller ones, so that not one page is free.
        for size in (1 << 20, 65536, 4096, 512, 1):
            chunk = b"\xa5" * size
            try:
                while True:
                    os.write(fd, chunk)
            except OSError:
                pass
    finally:
        os.close(fd)
    return path


class DiskFullTest(unittest.TestCase):
    def setUp(self):
        if os.geteuid() != 0:
            self.skipTest("mounting a tmpfs needs root: the disk-full test runs as root only")
        self.lab = lablib.Lab("disk-full", [lablib.host_board("host-0")])
        self.spool = tempfile.mkdtemp(prefix="mculab-disk-full-spool-")
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SIZE},mode=0700", "tmpfs",
                            self.lab.home], capture_output=True, text=True)
        if r.returncode != 0:
            shutil.rmtree(self.spool, ignore_errors=True)
            shutil.rmtree(self.lab.home, ignore_errors=True)
            self.skipTest("cannot mount a tmpfs here (a chroot or a container without "
                          f"CAP_SYS_ADMIN?): {r.stderr.strip()}")
        self.mounted = True

    def tearDown(self):
        for p in [self.lab.agent, self.lab.server]:
            if p:
                p.stop()
        subprocess.run(["umount", self.lab.home], capture_output=True)
        self.lab.close()
        shutil.rmtree(self.spool, ignore_errors=True)

    def start_agent(self):
        # The agent's spool is on another file system: only the server's disk fills up.
        cfg = self.lab.agent_config(spool=self.spool)
        self.lab.agent = lablib.Proc("mculab-agent",
                                     [os.path.join(lablib.BIN, "mculab-agent"), "--config", cfg],
                                     os.path.join(self.lab.out_dir, "agent.log"))
        self.lab.agent.wait_for("mculab-agent ready")

    def submit(self, label, iterations, check=True):
        csv = lablib.write_csv(self.spool, "fc.csv", FC_CSV)
        return self.lab.cli("submit", "--kind", "host", "--op", "fully_connected_s8", "--cases",
                            csv, "--iterations", str(iterations), "--warmup", "0", "--label",
                            label, "--json", check=check)

    def test_full_disk_stops_the_server_cleanly_and_it_recovers_when_space_returns(self):
        lab = self.lab
        lab.start_server()
        self.start_agent()
        before = lab.cli_json("submit", "--kind", "host", "--op", "fully_connected_s8", "--cases",
                              lablib.write_csv(self.spool, "fc.csv", FC_CSV), "--iterations", "50",
                              "--warmup", "0", "--label", "before")
        self.assertEqual(lab.wait_job(before["id"])["state"], "succeeded")

        # A long job whose samples cannot all be stored: the disk fills while it runs. Timing
        # alone never made sure of it (the job once ended before the filler did, on a loaded
        # machine, and again once ingest got faster): the disk is filled first to HEADROOM, far
        # less than the job's 2 M samples (20 cases x 100,000 iterations) take, and then whole.
        almost = fill(lab.home, "filler-first", leave=HEADROOM)
        during = lab.cli_json("submit", "--kind", "host", "--op", "fully_connected_s8", "--cases",
                              lablib.write_csv(self.spool, "fc-long.csv", LONG_CSV),
                              "--iterations", "100000", "--warmup", "0", "--label", "during")
        # On its board (from the log: a client's read could already meet the stopped server).
        lab.server.wait_for(f"job {during['id']} -> board", timeout=60)
        filler = fill(lab.home)
        serving_error = None
        lab.server.wait_for("stops accepting work", timeout=120)
        self.assertIsNone(lab.server.p.poll(), "the server must stay up and answer UNAVAILABLE")
        log = "".join(lab.server.lines)
        self.assertRegex(log, r"(?i)(disk|full|space)", "the failed write's reason is logged")
        # Every request now gets the reason, never a silent success.
        r = self.submit("refused", 10, check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("stopped accepting work", r.stderr + r.stdout)
        if serving_error is not None:
            self.assertRegex(serving_error, r"(?i)(stored|stopped accepting work|full)")

        # The database as the crash leaves it: whole.
        lab.server.stop()
        os.remove(filler)
        os.remove(almost)
        self.assertEqual(query(lab.db_path, "PRAGMA integrity_check"), [("ok",)])
        labels = {label: (j, state) for j, label, state in
                  query(lab.db_path, "SELECT id, label, state FROM jobs")}
        self.assertNotIn("refused", labels)
        self.assertEqual(labels["before"][1], "succeeded")

        # Space is back: the restarted server resumes from what was committed.
        lab.start_server()
        self.assertEqual(lab.cli_json("show", str(before["id"]))["state"], "succeeded")
        n = query(lab.db_path, "SELECT COUNT(*) FROM samples s JOIN jobs j ON s.run_id = "
                               "j.last_run_id WHERE j.id = ? AND s.metric = 0", (before["id"],))
        self.assertEqual(n, [(CASES * 50,)])
        if "during" in labels:  # stored before the disk filled: it still gets an end
            lab.cli("cancel", str(labels["during"][0]), check=False)
            self.assertIn(lab.wait_job(labels["during"][0], timeout=120)["state"],
                          ("cancelled", "succeeded", "failed"))
        after = lab.cli_json("submit", "--kind", "host", "--op", "fully_connected_s8", "--cases",
                             lablib.write_csv(self.spool, "fc.csv", FC_CSV), "--iterations", "50",
                             "--warmup", "0", "--label", "after")
        self.assertEqual(lab.wait_job(after["id"], timeout=120)["state"], "succeeded")
        self.assertEqual(query(lab.db_path, "PRAGMA integrity_check"), [("ok",)])


if __name__ == "__main__":
    unittest.main()
