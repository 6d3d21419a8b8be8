"""Integration: real mculab-server + real mculab-agent + host board over loopback, via the CLI."""
import os
import sqlite3
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import lablib  # noqa: E402

# A comment line and a quoted cell holding a comma: the CLI reads the case file's whole dialect.
FC_CSV = ("id,batch,input_size,output_size,comment\n# two fully connected cases\n"
          "0,1,64,32,small\n1,2,128,16,\"wide, and short\"\n")
CONV_CSV = "id,N,C,H,W,K,kh,kw,pads_0,pads_1\n5,1,4,8,8,4,3,3,1,1\n"


class HostLabTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        board = lablib.host_board()
        board["tags"] = {"cpu": "host-cpu"}  # for the --tag tests
        cls.lab = lablib.Lab("host-lab", [board])
        cls.lab.__enter__()
        cls.fc = lablib.write_csv(cls.lab.home, "fc.csv", FC_CSV)
        cls.conv = lablib.write_csv(cls.lab.home, "conv.csv", CONV_CSV)

    @classmethod
    def tearDownClass(cls):
        cls.lab.close()

    def test_agent_doctor_checks_the_server_and_the_token(self):
        import subprocess
        agent = os.path.join(lablib.BIN, "mculab-agent")
        cfg = self.lab.agent_config()
        good = subprocess.run([agent, "doctor", "--config", cfg], capture_output=True, text=True,
                              timeout=60)
        self.assertIn(f"ok    server {self.lab.address}: answers and accepts the agent's token",
                      good.stdout, good.stdout)
        # Nothing listens on the port: the doctor says so and exits 1.
        dead_cfg = os.path.join(self.lab.home, "agent-dead.toml")
        with open(cfg) as f, open(dead_cfg, "w") as out:
            out.write(f.read().replace(self.lab.address, f"127.0.0.1:{lablib.free_port()}"))
        dead = subprocess.run([agent, "doctor", "--config", dead_cfg], capture_output=True,
                              text=True, timeout=60)
        self.assertEqual(dead.returncode, 1, dead.stdout)
        self.assertIn("nothing answers at 127.0.0.1:", dead.stdout)
        # A token the server does not know.
        bad_cfg = os.path.join(self.lab.home, "agent-bad-token.toml")
        bad_token = os.path.join(self.lab.home, "bad.token")
        with open(bad_token, "w") as f:
            f.write("mcl_a_not_a_real_token\n")
        with open(cfg) as f, open(bad_cfg, "w") as out:
            text = f.read()
            token_line = [l for l in text.splitlines() if l.startswith("token_file")][0]
            out.write(text.replace(token_line, f'token_file = "{bad_token}"'))
        bad = subprocess.run([agent, "doctor", "--config", bad_cfg], capture_output=True,
                             text=True, timeout=60)
        self.assertEqual(bad.returncode, 1, bad.stdout)
        self.assertIn("refused the agent's token", bad.stdout)

    def test_boards_lists_the_host_board(self):
        boards = self.lab.cli_json("boards")
        self.assertEqual([b["name"] for b in boards], ["host-0"])
        self.assertEqual(boards[0]["kind"], "host")
        self.assertFalse(boards[0]["emulated"])

    def test_submit_wait_runs_and_reports_statistics(self):
        res = self.lab.cli_json("submit", "--kind", "host", "--op", "fully_connected_s8",
                                "--cases", self.fc, "--iterations", "7", "--warmup", "1",
                                "--label", "fc host", "--wait")
        self.assertEqual(res["state"], "succeeded", res.get("message"))
        self.assertEqual([c["id"] for c in res["cases"]], [0, 1])
        self.assertEqual(res["cases"][1]["params"], [2, 128, 16])
        for c in res["cases"]:
            self.assertEqual(c["n"], 7)
            self.assertTrue(c["checksum_ok"])
            self.assertGreater(c["min"], 0)
            self.assertLessEqual(c["min"], c["median"])
            self.assertLessEqual(c["median"], c["max"])
            self.assertEqual(len(c["samples"]["ns"] if "ns" in c["samples"] else
                                 next(iter(c["samples"].values()))), 7)
        prov = res["provenance"]
        self.assertEqual(prov["board"], "host-0")
        self.assertEqual(prov["timer_unit"], "ns")
        self.assertFalse(prov["emulated"])
        self.assertEqual(len(prov["firmware_sha256"]), 64)
        self.assertEqual(len(prov["workload_sha256"]), 64)
        self.assertTrue(prov["runner_version"])

        # show and export agree with what was stored
        text = self.lab.cli("show", str(res["id"])).stdout
        self.assertIn("succeeded", text)
        self.assertIn("fc host", text)
        csv = self.lab.cli("export", str(res["id"]), "--format", "ops-csv").stdout.splitlines()
        self.assertEqual(csv[0], "id,us")
        self.assertEqual([l.split(",")[0] for l in csv[1:]], ["0", "1"])
        full = self.lab.cli("export", str(res["id"]), "--csv").stdout.splitlines()
        self.assertTrue(full[0].startswith("id,N,in_features,out_features,n,min_us,median_us,"),
                        full[0])
        self.assertTrue(full[0].endswith(",checksum"), full[0])
        self.assertEqual([l.split(",")[-1] for l in full[1:]], ["ok", "ok"])
        medians = {l.split(",")[0]: l.split(",")[6] for l in full[1:]}
        self.assertEqual(medians, {l.split(",")[0]: l.split(",")[1] for l in csv[1:]})

        # every raw sample is in SQLite
        db = sqlite3.connect(f"file:{self.lab.db_path}?mode=ro", uri=True)
        try:
            n = db.execute("SELECT COUNT(*) FROM samples s JOIN runs r ON r.id = s.run_id "
                           "WHERE r.job_id = ? AND s.metric = 0", (res["id"],)).fetchone()[0]
        finally:
            db.close()
        self.assertEqual(n, 14)

    def test_extra_column_warns_but_submits(self):
        r = self.lab.cli("submit", "--kind", "host", "--op", "fully_connected_s8", "--cases", self.fc,
                         "--iterations", "2")
        self.assertIn("column 'comment' is not a parameter", r.stderr)
        self.assertTrue(r.stdout.strip().isdigit())

    def test_conv2d_on_host_with_defaults(self):
        res = self.lab.cli_json("submit", "--board", "host-0", "--op", "conv2d_s8", "--cases", self.conv,
                                "--iterations", "3", "--warmup", "0", "--wait")
        self.assertEqual(res["state"], "succeeded", res.get("message"))
        self.assertEqual(res["cases"][0]["params"], [1, 4, 8, 8, 4, 3, 3, 1, 1, 1, 1])

    def test_bad_csv_is_one_clear_line_and_exit_2(self):
        bad = lablib.write_csv(self.lab.home, "bad.csv", "id,in,out\n0,4,5\n1,4,x\n")
        r = self.lab.cli("submit", "--kind", "host", "--op", "fully_connected_s8", "--cases", bad,
                         check=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn("line 3, column 'out': 'x' is not an integer", r.stderr)

    def test_unknown_kind_is_rejected_at_submit_naming_what_exists(self):
        r = self.lab.cli("submit", "--kind", "stm32h7", "--op", "fully_connected_s8", "--cases", self.fc,
                         check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("stm32h7", r.stderr)
        self.assertIn("host", r.stderr)

    def test_tag_the_board_has_runs_and_other_tags_are_rejected(self):
        res = self.lab.cli_json("submit", "--kind", "host", "--op", "fully_connected_s8", "--cases",
                                self.fc, "--iterations", "1", "--tag", "cpu=host-cpu", "--wait",
                                timeout=120)
        self.assertEqual(res["state"], "succeeded", res.get("message"))
        self.assertEqual(res["provenance"]["board"], "host-0")
        self.assertEqual(res["tags"], {"cpu": "host-cpu"})
        self.assertIn("tags: cpu=host-cpu", self.lab.cli("show", str(res["id"])).stdout)
        listed = [j for j in self.lab.cli_json("jobs")["jobs"] if j["id"] == res["id"]]
        self.assertEqual(listed[0]["tags"], {"cpu": "host-cpu"})

        r = self.lab.cli("submit", "--kind", "host", "--op", "fully_connected_s8", "--cases",
                         self.fc, "--tag", "cpu=cortex-m7", check=False)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("no board of kind host has tag cpu=cortex-m7; its boards have: "
                      "host-0 {cpu=host-cpu, timing=host}", r.stderr)

        r = self.lab.cli("submit", "--kind", "host", "--op", "fully_connected_s8", "--cases",
                         self.fc, "--tag", "cpu", check=False)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--tag 'cpu' is not KEY=VALUE", r.stderr)

    def test_unknown_op_is_a_usage_error(self):
        r = self.lab.cli("submit", "--kind", "host", "--op", "matmul", "--cases", self.fc, check=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn("conv2d_s8", r.stderr)

    def test_unknown_job_is_not_found(self):
        r = self.lab.cli("show", "999999", check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("999999", r.stderr)

    def test_jobs_lists_newest_first_and_filters(self):
        a = int(self.lab.cli("submit", "--kind", "host", "--op", "fully_connected_s8", "--cases", self.fc,
                             "--iterations", "1").stdout)
        b = int(self.lab.cli("submit", "--kind", "host", "--op", "conv2d_s8", "--cases", self.conv,
                             "--iterations", "1").stdout)
        jobs = self.lab.cli_json("jobs", "--op", "conv2d_s8")["jobs"]
        ids = [j["id"] for j in jobs]
        self.assertIn(b, ids)
        self.assertNotIn(a, ids)
        self.assertEqual(ids, sorted(ids, reverse=True))

    def test_cancel_a_queued_or_running_job(self):
        big = lablib.write_csv(self.lab.home, "big.csv", "id,in,out\n0,4096,4096\n")
        jid = self.lab.cli("submit", "--kind", "host", "--op", "fully_connected_s8", "--cases", big,
                           "--iterations", "100000").stdout.strip()
        r = self.lab.cli("cancel", jid)
        self.assertIn("cancelled", r.stdout)
        show = self.lab.cli_json("show", jid)
        self.assertEqual(show["state"], "cancelled")
        # the board is free again: a new job runs to the end
        res = self.lab.cli_json("submit", "--kind", "host", "--op", "fully_connected_s8", "--cases",
                                self.fc, "--iterations", "1", "--wait", timeout=120)
        self.assertEqual(res["state"], "succeeded")


if __name__ == "__main__":
    unittest.main(verbosity=2)
