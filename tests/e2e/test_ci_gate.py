"""End to end: the CI gate (docs/ci.md) against a lab with the emulated Cortex-M55 (QEMU
mps3-an547), whose instruction counts are exact, so a gate at 1% is deterministic.

The `mculab` commands of docs/ci.md's GitLab CI and GitHub Actions snippets run as written there
(through bash, with the model and board kind replaced by the test's and each CI's variables set as
that CI sets them): the main branch's job, then the merge request's gated against branch:main at
1% (exit 0, the JUnit, Markdown and JSON reports say passed). The jobs know their commit, branch
and link. A deliberately slower job (the same model on the reference kernels) fails the gate with
the documented status 3, its JUnit file has the failure and its Markdown table names the case and
the ratio; jobs that cannot be compared give status 4. `mculab compare --json` prints the document
GET /api/v1/compare serves. The lab's [notify] webhook is a local HTTP listener (its first POST
answered 503, so the alert is retried): a change point in a followed series and a failed gate
each post an alert to it."""
import http.server
import json
import os
import shutil
import threading
import time
import re
import sqlite3
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import lablib  # noqa: E402

REPO = os.path.join(os.path.dirname(__file__), "..", "..")
CI_DOC = os.path.join(REPO, "docs", "ci.md")


def snippet_commands(title):
    """The `mculab ...` commands of the yaml block under the heading `## TITLE` of docs/ci.md, in
    order, as a shell runs them."""
    text = open(CI_DOC, encoding="utf-8").read()
    section = text.split("## " + title + "\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    out = []
    for line in block.splitlines():
        m = re.match(r"\s*(?:-\s+|run:\s+)(mculab .*)$", line)
        if m:
            out.append(m.group(1))
    return out


class Webhook:
    """A chat service's incoming webhook on 127.0.0.1: keeps every JSON body POSTed to it and
    answers 503 to the first (the lab must try again), 200 to the rest."""

    def __init__(self):
        self.bodies = []
        self.requests = 0
        hook = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                hook.requests += 1
                if hook.requests == 1:
                    self.send_response(503)
                    self.end_headers()
                    return
                hook.bodies.append(json.loads(body))
                self.send_response(200)
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/lab"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def wait_for(self, event, key, value, timeout=30):
        """The first alert of `event` whose mculab.KEY is VALUE, waiting for it."""
        end = time.time() + timeout
        while time.time() < end:
            for b in list(self.bodies):
                if b["mculab"].get("event") == event and b["mculab"].get(key) == value:
                    return b
            time.sleep(0.1)
        raise AssertionError(f"no {event} alert with {key}={value}; got {self.bodies}")

    def close(self):
        self.server.shutdown()


class CiGateTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not lablib.AN547_ELF:
            raise unittest.SkipTest("no an547 runner in this build")
        cls.hook = Webhook()
        cls.config_dir = tempfile.mkdtemp(prefix="mculab-ci-gate-")
        config = os.path.join(cls.config_dir, "server.toml")
        cls.lab = lablib.Lab("ci-gate", [lablib.qemu_board("an547-0"), lablib.host_board()],
                             server_args=["--config", config])
        with open(config, "w") as f:
            f.write(f'[notify]\nwebhooks = ["{cls.hook.url}"]\npoll_ms = 200\n'
                    f'web_url = "{cls.lab.http_url}"\n')
        cls.lab.__enter__()
        cls.model = os.path.join(cls.lab.home, "kws.tflite")
        subprocess.run([os.path.join(lablib.BIN, "mculab-tflite-writer"), "--seed", "7",
                        cls.model], check=True, capture_output=True)

    @classmethod
    def tearDownClass(cls):
        cls.lab.close()
        cls.hook.close()
        shutil.rmtree(cls.config_dir, ignore_errors=True)

    def run_snippet(self, command, ci_env, cwd):
        """Runs one snippet command through bash as the CI would: MCULAB_SERVER and MCULAB_TOKEN
        from its secret store, the snippet's MODEL and BOARD_KIND, the CI's own variables."""
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("GITHUB_", "CI_", "MCULAB_"))}
        env.update(ci_env)
        env.update(MCULAB_SERVER=self.lab.address, MCULAB_TOKEN=self.lab.admin_token,
                   MCULAB_WEB_URL=self.lab.http_url, MODEL=self.model,
                   BOARD_KIND="corstone300-qemu", HOME=self.lab.home,
                   PATH=os.path.abspath(lablib.BIN) + os.pathsep + os.environ["PATH"])
        return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True,
                              text=True, timeout=600)

    def newest_job(self):
        return self.lab.api_json("api/v1/jobs?limit=1")["jobs"][0]

    def check_snippet(self, title, main_env, gate_env, branch):
        main_cmd, gate_cmd = snippet_commands(title)
        self.assertIn("--baseline branch:main --max-regression 1", gate_cmd)
        with tempfile.TemporaryDirectory() as cwd:
            r = self.run_snippet(main_cmd, main_env, cwd)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            main_job = self.newest_job()
            self.assertEqual(main_job["branch"], "main")
            r = self.run_snippet(gate_cmd, gate_env, cwd)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn("gate passed: 1 case of job", r.stdout)
            job = self.newest_job()
            self.assertEqual(job["branch"], branch)
            self.assertEqual(job["state"], "succeeded")
            suite = ET.parse(os.path.join(cwd, "mculab-junit.xml")).getroot()
            self.assertEqual(suite.get("failures"), "0")
            self.assertEqual(suite.get("tests"), "1")
            md = open(os.path.join(cwd, "mculab.md"), encoding="utf-8").read()
            self.assertIn("### mculab benchmark gate: passed", md)
            self.assertIn(f"compare.html?jobs={main_job['id']},{job['id']}", md)
            self.assertIn("| 0 | - | ", md)
            report = json.load(open(os.path.join(cwd, "mculab.json"), encoding="utf-8"))
            self.assertEqual(report["status"], "passed")
            self.assertEqual(report["baseline"], main_job["id"])
            self.assertEqual(report["cases"][0]["ratio"], 1.0,
                             "an emulated count does not move between two runs of one model")
            self.assertEqual(report["cases"][0]["verdict"], "no change")
        return main_job, job

    def test_gitlab_snippet_gates_a_merge_request_against_main(self):
        sha_main, sha_mr = "a" * 40, "b" * 40
        main_job, job = self.check_snippet(
            "GitLab CI",
            {"CI_COMMIT_SHA": sha_main, "CI_COMMIT_REF_NAME": "main",
             "CI_JOB_URL": "https://gitlab.example/p/-/jobs/1"},
            {"CI_COMMIT_SHA": sha_mr, "CI_COMMIT_REF_NAME": "feature-x",
             "CI_JOB_URL": "https://gitlab.example/p/-/jobs/2"},
            "feature-x")
        self.assertEqual(main_job["commit"], sha_main)
        self.assertEqual(job["commit"], sha_mr)
        self.assertEqual(job["url"], "https://gitlab.example/p/-/jobs/2")
        listed = self.lab.cli_json("jobs", "--branch", "feature-x")
        self.assertEqual([j["id"] for j in listed["jobs"]], [job["id"]])
        listed = self.lab.cli_json("jobs", "--commit", sha_main[:8])
        self.assertEqual([j["id"] for j in listed["jobs"]], [main_job["id"]])

    def test_github_snippet_gates_a_pull_request_against_main(self):
        run = {"GITHUB_REPOSITORY": "o/r", "GITHUB_RUN_ID": "77",
               "GITHUB_SERVER_URL": "https://github.com"}
        _, job = self.check_snippet(
            "GitHub Actions",
            dict(run, GITHUB_SHA="c" * 40, GITHUB_REF_NAME="main"),
            dict(run, GITHUB_SHA="d" * 40, GITHUB_REF_NAME="12/merge", GITHUB_HEAD_REF="fix-y"),
            "fix-y")
        self.assertEqual(job["url"], "https://github.com/o/r/actions/runs/77")

    def test_a_slower_job_fails_the_gate_with_status_3_and_says_why(self):
        base = self.lab.cli_json("submit", "--kind", "corstone300-qemu", "--model", self.model,
                                 "--iterations", "3", "--label", "fast base", "--wait")
        self.assertEqual(base["state"], "succeeded")
        with tempfile.TemporaryDirectory() as d:
            junit, md = os.path.join(d, "j.xml"), os.path.join(d, "r.md")
            r = self.lab.cli("submit", "--kind", "corstone300-qemu", "--model", self.model,
                             "--iterations", "3", "--kernels", "reference", "--wait",
                             "--baseline", "label:fast base", "--max-regression", "1%",
                             "--report", f"junit:{junit}", "--report", f"markdown:{md}",
                             check=False)
            self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
            self.assertIn("gate failed: 1 of 1 case", r.stdout)
            slow = self.newest_job()
            suite = ET.parse(junit).getroot()
            self.assertEqual(suite.get("failures"), "1")
            failure = suite.find(".//failure")
            self.assertIsNotNone(failure)
            self.assertIn("regressed", failure.get("message"))
            self.assertIn("emulated: the count is exact", failure.get("message"))
            table = open(md, encoding="utf-8").read()
            self.assertIn("**FAILED**", table)
            cmp = self.lab.api_json(f"api/v1/compare?jobs={base['id']},{slow['id']}")
            ratio = cmp["cases"][0]["ratios"][1]["ratio"]
            self.assertGreater(ratio, 1.01)
            self.assertEqual(cmp["cases"][0]["ratios"][1]["verdict"], "slower")
            for v in cmp["cases"][0]["variation"]:
                self.assertEqual(v["stability"], "exact", "emulated counts are never unstable")
                self.assertIsNone(v["max_cv"])
            # Per layer: the exact counts of each layer, matched by op index, with verdicts.
            self.assertGreater(len(cmp["layers"]), 1, cmp)
            for layer in cmp["layers"]:
                self.assertEqual(len(layer["means"]), 2)
                r = layer["ratios"][1]
                self.assertEqual(r["lo"], r["ratio"], "an emulated count is exact")
                self.assertIn(r["verdict"], ("slower", "faster", "no change"))
            self.assertTrue(any(l["ratios"][1]["verdict"] == "slower" for l in cmp["layers"]))
            pct = f"+{(ratio - 1) * 100:.1f}%"
            self.assertRegex(table, r"\| 0 \| - \| [0-9.e+]+ \| [0-9.e+]+ \| " + re.escape(pct))
            # The same gate for a job that already ran; and its improvement the other way round.
            g = self.lab.cli("gate", str(slow["id"]), "--baseline", str(base["id"]),
                             "--max-regression", "1", check=False)
            self.assertEqual(g.returncode, 3, g.stdout + g.stderr)
            # The failed gate was posted to the lab's webhook, with the compare page's link.
            alert = self.hook.wait_for("gate_failed", "job", slow["id"])
            self.assertEqual(alert["mculab"]["baseline"], base["id"])
            self.assertIn(f"gate failed for job {slow['id']} against job {base['id']}: gate failed",
                          alert["text"])
            self.assertIn(f"compare.html?jobs={base['id']},{slow['id']}", alert["text"])
            g = self.lab.cli("gate", str(base["id"]), "--baseline", str(slow["id"]),
                             "--max-improvement", "5", check=False)
            self.assertEqual(g.returncode, 3, g.stdout + g.stderr)
            self.assertIn("improved beyond the limit", g.stdout)
            # `mculab compare` prints the compare page's document, and a table of it.
            self.assertEqual(self.lab.cli_json("compare", str(base["id"]), str(slow["id"])), cmp)
            text = self.lab.cli("compare", str(base["id"]), str(slow["id"])).stdout
            self.assertIn(f"{base['id']} (baseline)", text)
            self.assertIn("slower", text)
            self.assertIn(pct, text)

    def test_the_pages_csv_is_the_exports_bytes(self):
        """GET /api/v1/jobs/{id}/export.csv (the page's "Download CSV") serves the bytes
        `mculab export` writes, in both layouts, for an emulated and a host job."""
        csv = lablib.write_csv(self.lab.home, "fc-export.csv",
                               "id,batch,input_size,output_size\n0,1,8,4\n3,1,16,8\n")
        for kind in ("corstone300-qemu", "host"):
            job = self.lab.cli_json("submit", "--kind", kind, "--op", "fully_connected_s8",
                                    "--cases", csv, "--iterations", "5", "--wait")
            self.assertEqual(job["state"], "succeeded", job.get("message"))
            for fmt in ("csv", "ops-csv"):
                cli = self.lab.cli("export", str(job["id"]), "--format", fmt).stdout
                status, headers, body = self.lab.http_get(
                    f"api/v1/jobs/{job['id']}/export.csv?format={fmt}")
                self.assertEqual(status, 200, body)
                self.assertEqual(body.decode(), cli, f"{kind} {fmt}")
                self.assertTrue(headers["Content-Type"].startswith("text/csv"), headers)

    def test_jobs_that_cannot_be_compared_give_status_4(self):
        csv = lablib.write_csv(self.lab.home, "fc.csv", "id,batch,input_size,output_size\n0,1,8,4\n")
        op = self.lab.cli_json("submit", "--kind", "corstone300-qemu", "--op",
                               "fully_connected_s8", "--cases", csv, "--iterations", "3",
                               "--wait")
        model = self.lab.cli_json("submit", "--kind", "corstone300-qemu", "--model", self.model,
                                  "--iterations", "3", "--wait")
        r = self.lab.cli("gate", str(model["id"]), "--baseline", str(op["id"]), check=False)
        self.assertEqual(r.returncode, 4, r.stdout + r.stderr)
        self.assertIn("measured different things", r.stdout)
        with tempfile.TemporaryDirectory() as d:
            junit = os.path.join(d, "j.xml")
            r = self.lab.cli("gate", str(model["id"]), "--baseline", "label:no such label",
                             "--report", f"junit:{junit}", check=False)
            self.assertEqual(r.returncode, 4, r.stdout + r.stderr)
            self.assertIn("no baseline", r.stderr)
            suite = ET.parse(junit).getroot()
            self.assertEqual((suite.get("tests"), suite.get("errors")), ("1", "1"),
                             "the CI still gets a report saying why nothing was compared")
        r = self.lab.cli("gate", str(model["id"]), "--baseline", "main", check=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--baseline takes a job id, label:TEXT or branch:NAME", r.stderr)
        r = self.lab.cli("submit", "--kind", "corstone300-qemu", "--model", self.model,
                         "--baseline", "1", check=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn("add --wait", r.stderr)
        r = self.lab.cli("submit", "--kind", "corstone300-qemu", "--model", self.model,
                         "--commit", "not-a-sha", check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("commit must be 4 to 64 hex digits", r.stderr)

    def test_noisy_host_cases_are_unstable_never_a_regression(self):
        """Host timings vary: a case whose cv is above --max-cv is unstable on both sides, shown
        as such by compare and the gate, which judges nothing then (status 4, JUnit skipped)."""
        csv = lablib.write_csv(self.lab.home, "fc2.csv",
                               "id,batch,input_size,output_size\n0,1,8,4\n1,1,16,8\n")
        a, b = (self.lab.cli_json("submit", "--kind", "host", "--op", "fully_connected_s8",
                                  "--cases", csv, "--iterations", "30", "--wait")
                for _ in range(2))
        self.assertEqual((a["state"], b["state"]), ("succeeded", "succeeded"))
        default = self.lab.cli_json("compare", str(a["id"]), str(b["id"]))
        for case in default["cases"]:
            for v in case["variation"]:
                self.assertIn(v["stability"], ("steady", "unstable"))
                self.assertAlmostEqual(v["max_cv"], 0.10, msg="a host board's default limit")
                self.assertEqual(v["n"], 30)
                self.assertEqual(v["outliers"], v["low_outliers"] + v["high_outliers"])
        strict = self.lab.cli_json("compare", str(a["id"]), str(b["id"]), "--max-cv", "0.0001")
        self.assertEqual(strict, self.lab.api_json(
            f"api/v1/compare?jobs={a['id']},{b['id']}&max_cv=0.0001"))
        for case in strict["cases"]:
            self.assertEqual([v["stability"] for v in case["variation"]], ["unstable"] * 2)
            self.assertEqual(case["ratios"][1]["verdict"], "unstable")
        text = self.lab.cli("compare", str(a["id"]), str(b["id"]), "--max-cv", "0.0001").stdout
        self.assertIn("unstable (> 0.0001%)", text)
        with tempfile.TemporaryDirectory() as d:
            junit = os.path.join(d, "j.xml")
            r = self.lab.cli("gate", str(b["id"]), "--baseline", str(a["id"]), "--max-cv",
                             "0.0001", "--report", f"junit:{junit}", check=False)
            self.assertEqual(r.returncode, 4, r.stdout + r.stderr)
            self.assertIn("is unstable", r.stdout)
            self.assertIn("every case measured by both jobs is unstable", r.stdout)
            suite = ET.parse(junit).getroot()
            self.assertEqual((suite.get("skipped"), suite.get("failures")), ("2", "0"))
        r = self.lab.cli("compare", str(a["id"]), str(b["id"]), "--max-cv", "lots", check=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--max-cv takes a percentage", r.stderr)

    def test_a_noisy_host_case_is_rerun_on_its_board_and_stays_unstable(self):
        """`submit --reruns 2 --max-cv 0.0001`: no host timing is that steady, so the job runs
        three times on the same board, every run's samples are kept, and the job says which cases
        stayed unstable; the gate calls them unstable."""
        csv = lablib.write_csv(self.lab.home, "fc3.csv", "id,batch,input_size,output_size\n0,1,8,4\n")
        job = self.lab.cli_json("submit", "--kind", "host", "--op", "fully_connected_s8",
                                "--cases", csv, "--iterations", "20", "--reruns", "2",
                                "--max-cv", "0.0001", "--wait")
        self.assertEqual(job["state"], "succeeded")
        self.assertEqual((job["reruns"], job["reruns_done"]), (2, 2))
        self.assertEqual(job["attempts"], 3)
        self.assertAlmostEqual(job["max_cv_pct"], 0.0001)
        self.assertEqual(job["requested_board"], "host-0", "pinned to the board it ran on")
        self.assertIn("still unstable after 2 reruns: case 0 (cv ", job["message"])
        self.assertIn("reruns: 2 of 2 while a case's cv is above 0.0001%",
                      self.lab.cli("show", str(job["id"])).stdout)
        # Each run's samples are kept.
        db = sqlite3.connect(f"file:{self.lab.db_path}?mode=ro", uri=True)
        try:
            runs = db.execute("SELECT id, board, state FROM runs WHERE job_id = ? ORDER BY id",
                              (job["id"],)).fetchall()
            self.assertEqual([(b, s) for _, b, s in runs], [("host-0", "succeeded")] * 3)
            for run_id, _, _ in runs:
                n = db.execute("SELECT COUNT(*) FROM samples WHERE run_id = ? AND metric = 0",
                               (run_id,)).fetchone()[0]
                self.assertEqual(n, 20, f"run {run_id}")
        finally:
            db.close()
        base = self.lab.cli_json("submit", "--kind", "host", "--op", "fully_connected_s8",
                                 "--cases", csv, "--iterations", "20", "--wait")
        r = self.lab.cli("gate", str(job["id"]), "--baseline", str(base["id"]), "--max-cv",
                         "0.0001", check=False)
        self.assertEqual(r.returncode, 4, r.stdout + r.stderr)
        self.assertIn("is unstable", r.stdout)
        r = self.lab.cli("submit", "--kind", "host", "--op", "fully_connected_s8", "--cases", csv,
                         "--reruns", "9", check=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--reruns", r.stderr)


    def test_a_change_point_in_a_followed_series_is_posted_to_the_webhook(self):
        """`mculab trend ... --follow`, then three jobs on the fast kernels and three on the
        reference kernels (exact counts: a step of more than 1%): one alert names the step."""
        model = os.path.join(self.lab.home, "alerts.tflite")  # a series of its own
        shutil.copy(self.model, model)
        r = self.lab.cli("trend", "--kind", "corstone300-qemu", "--op", "model", "--case", "0",
                         "--model", "alerts.tflite", "--follow")
        self.assertIn("following model alerts.tflite case 0 on corstone300-qemu (follow ",
                      r.stdout)
        follow = self.lab.cli_json("follows", "--json")["follows"][-1]
        jobs = []
        for kernels in ["fast"] * 3 + ["reference"] * 3:
            job = self.lab.cli_json("submit", "--kind", "corstone300-qemu", "--model", model,
                                    "--iterations", "3", "--kernels", kernels, "--wait")
            self.assertEqual(job["state"], "succeeded")
            jobs.append(job["id"])
        alert = self.hook.wait_for("change_point", "after_job", jobs[3])
        self.assertEqual(alert["mculab"]["before_job"], jobs[2])
        self.assertEqual(alert["mculab"]["follow"], follow["id"])
        self.assertGreater(alert["mculab"]["ratio"], 1.01)
        self.assertIn("change point in model alerts.tflite case 0 on corstone300-qemu: "
                      f"job {jobs[2]} -> job {jobs[3]}", alert["text"])
        self.assertIn("slower", alert["text"])
        self.assertGreaterEqual(self.hook.requests, 2, "the first POST got 503 and was retried")
        listed = self.lab.cli_json("follows", "--json")
        self.assertEqual(listed["webhooks"], 1)
        mine = [f for f in listed["follows"] if f["id"] == follow["id"]][0]
        self.assertEqual(mine["notified_to"], jobs[3])
        r = self.lab.cli("unfollow", str(follow["id"]))
        self.assertIn(f"follow {follow['id']} removed", r.stdout)
        r = self.lab.cli("unfollow", str(follow["id"]), check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("no follow", r.stderr)


if __name__ == "__main__":
    unittest.main()
