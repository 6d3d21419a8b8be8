"""End to end: the web page against a real mculab-server with real jobs.

Starts a server and an agent with a host board (and the emulated Corstone-300 board when its
firmware was built), runs real jobs through the CLI (two or more succeeded jobs of the same op and
kind, one labelled <img src=x onerror=alert(1)>), then runs the page's own tests
(tests/web/run.sh: node unit tests, then Playwright in headless Chromium); one job of the newest
job's op is cancelled, so filtering the history by state changes what it shows with MCULAB_WEB_URL
pointing at the server. Their screenshots land in $MCULAB_TEST_OUTPUT/web-e2e/web/.
"""
import json
import os
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import lablib  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
XSS_LABEL = "<img src=x onerror=alert(1)>"
CONV = os.path.join(ROOT, "examples", "conv2d_sweep.csv")
FC = os.path.join(ROOT, "examples", "fully_connected_sweep.csv")
# With the jobs below, more than 50: the browser tests page through the history 25 at a time.
HISTORY_FILLERS = 48
CHROMIUM = os.environ.get("MCULAB_CHROMIUM", "/usr/bin/chromium")
HAVE_QEMU = bool(lablib.AN547_ELF and os.path.exists(lablib.AN547_ELF)
                 and shutil.which("qemu-system-arm"))


@unittest.skipUnless(shutil.which("node") and shutil.which("npm") and os.path.exists(CHROMIUM),
                     "node, npm and Chromium are needed for the browser tests")
class WebPageTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        boards = [lablib.host_board()]
        if HAVE_QEMU:
            boards.append(lablib.qemu_board())
        cls.lab = lablib.Lab("web-e2e", boards)
        cls.lab.__enter__()
        try:
            cls.run_jobs()
        except BaseException:
            cls.lab.close()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.lab.close()

    @classmethod
    def submit(cls, *args, wait=True):
        """The job's results (JSON) when waiting, else its id."""
        extra = ["--wait", "--json"] if wait else []
        r = cls.lab.cli("submit", *args, *extra, timeout=600)
        return json.loads(r.stdout) if wait else int(r.stdout.strip())

    @classmethod
    def run_jobs(cls):
        # Fillers first (the host board takes jobs in submit order, so waiting for the last one
        # waits for them all), then the jobs the browser tests look at, newest last.
        for i in range(HISTORY_FILLERS):
            cls.submit("--kind", "host", "--op", "fully_connected_s8", "--cases", FC,
                       "--iterations", "5", "--warmup", "0", "--label", f"filler {i}",
                       wait=i == HISTORY_FILLERS - 1)
        if HAVE_QEMU:
            for label in ("qemu sweep", "qemu sweep again"):
                job = cls.submit("--kind", "corstone300-qemu", "--op", "conv2d_s8", "--cases", CONV,
                                 "--iterations", "5", "--warmup", "1", "--label", label)
                assert job["state"] == "succeeded", job
        # A long sweep, cancelled at once (it would take minutes).
        long_job = cls.submit("--kind", "host", "--op", "conv2d_s8", "--cases", CONV,
                              "--iterations", "100000", "--label", "cancelled sweep", wait=False)
        cls.lab.cli("cancel", str(long_job))
        cls.jobs = []
        for label in ("host baseline", XSS_LABEL):
            job = cls.submit("--kind", "host", "--op", "conv2d_s8", "--cases", CONV,
                             "--iterations", "50", "--warmup", "2", "--label", label)
            assert job["state"] == "succeeded", job
            cls.jobs.append(job)
        # A reservation with a note, last (no job after it): the boards page and the API show who
        # holds the board, until when, and why.
        cls.lab.cli("reserve", "host-0", "--for", "2h", "--note", "e2e reservation note")

    def get(self, path):
        status, headers, body = self.lab.http_get(path)
        self.assertEqual(status, 200, body)
        return status, headers, body

    def test_the_api_serves_the_real_jobs(self):
        status, headers, body = self.get("api/v1/jobs?limit=5&state=succeeded")
        self.assertEqual(status, 200)
        self.assertIn("script-src 'self'", headers["Content-Security-Policy"])
        page = json.loads(body)
        self.assertGreaterEqual(page["total"], HISTORY_FILLERS + 2)
        self.assertEqual(page["jobs"][0]["label"], XSS_LABEL)
        xss = self.jobs[1]["id"]
        detail = self.lab.api_json(f"api/v1/jobs/{xss}")
        self.assertEqual(len(detail["cases"]), 4)
        self.assertEqual(detail["provenance"]["timer_unit"], "ns")
        self.assertFalse(detail["provenance"]["emulated"])
        samples = self.lab.api_json(f"api/v1/jobs/{xss}/samples?case=1&bins=10")
        self.assertEqual(samples["n"], 50)
        self.assertEqual(sum(samples["histogram"]["counts"]), 50)
        compare = self.lab.api_json(f"api/v1/compare?jobs={self.jobs[0]['id']},{xss}")
        for case in compare["cases"]:
            r = case["ratios"][1]
            self.assertLessEqual(r["lo"], r["hi"])
        _, _, metrics = self.get("metrics")
        self.assertIn(b'mculab_jobs{state="succeeded"}', metrics)

    def test_the_boards_api_shows_the_reservation_like_the_cli(self):
        boards = {b["name"]: b for b in self.lab.api_json("api/v1/boards")["boards"]}
        cli = {b["name"]: b for b in self.lab.cli_json("boards")}
        host = boards["host-0"]
        self.assertEqual(host["holder"], cli["host-0"]["holder"])
        self.assertNotEqual(host["holder"], "")
        self.assertEqual(host["lease_until_ms"], int(cli["host-0"]["lease_until_ms"]))
        self.assertGreater(host["lease_until_ms"], 0)
        self.assertEqual(host["note"], "e2e reservation note")

    def test_the_trend_of_a_case_covers_every_job_that_ran_it(self):
        """The fillers ran the same sweep on the host board: each case's series holds them all,
        oldest first, and `mculab trend --json` prints the API's document."""
        newest = self.lab.cli_json("jobs", "--op", "fully_connected_s8", "--state", "succeeded",
                                   "--limit", "1")["jobs"][0]
        case = self.lab.cli_json("show", str(newest["id"]))["cases"][0]
        params = ",".join(str(p) for p in case["params"])
        series = self.lab.api_json(f"api/v1/series?kind=host&op=fully_connected_s8&params={params}")
        ids = [j["id"] for j in series["jobs"]]
        self.assertEqual(len(ids), HISTORY_FILLERS)
        self.assertEqual(ids, sorted(ids))
        self.assertEqual(ids[-1], newest["id"])
        for j in series["jobs"]:
            self.assertLessEqual(j["lo"], j["median"])
            self.assertLessEqual(j["median"], j["hi"])
            self.assertEqual(j["measured"], "host")
        cli = self.lab.cli_json("trend", "--job", str(newest["id"]), "--case", str(case["id"]))
        self.assertEqual(cli, series)

    def test_the_page_passes_its_browser_tests_against_the_real_server(self):
        out = self.lab.out_dir  # run.sh writes to $MCULAB_TEST_OUTPUT/web
        env = dict(os.environ, MCULAB_WEB_URL=self.lab.http_url, MCULAB_TOKEN=self.lab.add_user("web-viewer", "viewer"),
                   MCULAB_TEST_OUTPUT=out)
        env.pop("MCULAB_FIXTURE", None)
        r = subprocess.run([os.path.join(ROOT, "tests", "web", "run.sh")], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=900)
        with open(os.path.join(out, "web-run.log"), "w") as f:
            f.write(r.stdout + r.stderr)
        lines = [l for l in r.stdout.splitlines() if l.strip()]
        self.assertEqual(r.returncode, 0, "\n".join(lines[-60:]) + r.stderr[-3000:])
        self.assertRegex(lines[-1], r"^\d+ passed, 0 failed$")
        shots = os.path.join(out, "web")
        for name in ("history", "job", "compare", "boards", "trend"):
            for device in ("desktop", "phone"):
                self.assertTrue(os.path.exists(os.path.join(shots, f"{name}-{device}.png")),
                                f"no screenshot {name}-{device}.png in {shots}")
        if HAVE_QEMU:
            self.assertTrue(os.path.exists(os.path.join(shots, "job-emulated-desktop.png")))


if __name__ == "__main__":
    unittest.main(verbosity=2)
