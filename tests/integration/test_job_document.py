"""Integration: `mculab show --json` and GET /api/v1/jobs/{id} print the same document for the same
job (one read model, one writer: proto/json/documents.h), whatever state the job is in;
`mculab jobs --json` and GET /api/v1/jobs print the same job list for the same filter; and
`mculab boards --json` lists the boards GET /api/v1/boards serves.

A real server and agent with a host board and a slow fake board; each job is compared once its
document no longer changes: succeeded, queued behind a reservation, cancelled after one of its
cases finished.
"""
import json
import os
import sys
import unittest
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import lablib  # noqa: E402

FC_CSV = "id,batch,input_size,output_size\n0,1,64,32\n1,2,128,16\n2,1,32,8\n"


class JobDocumentTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        boards = [lablib.host_board("host-0"), lablib.fake_board("slow-0", sample_delay_ms=20)]
        cls.lab = lablib.Lab("job-document", boards)
        cls.lab.__enter__()
        cls.fc = lablib.write_csv(cls.lab.home, "fc.csv", FC_CSV)

    @classmethod
    def tearDownClass(cls):
        cls.lab.close()

    def assert_same_document(self, job_id):
        """The CLI's document (raw samples included) is the API's with ?samples=1, and the API's
        default document is the same without the samples; export --format json prints it too
        for a succeeded job (the only kind it exports)."""
        cli = self.lab.cli_json("show", str(job_id))
        self.assertEqual(cli, self.lab.api_json(f"api/v1/jobs/{job_id}?samples=1"))
        without = json.loads(json.dumps(cli))
        for c in without["cases"]:
            c.pop("samples", None)
        self.assertEqual(without, self.lab.api_json(f"api/v1/jobs/{job_id}"))
        if cli["state"] == "succeeded":
            exported = self.lab.cli("export", str(job_id), "--format", "json").stdout
            self.assertEqual(json.loads(exported), cli)
        return cli

    def test_a_succeeded_job_is_one_document(self):
        res = self.lab.cli_json("submit", "--kind", "host", "--op", "fully_connected_s8",
                                "--cases", self.fc, "--iterations", "5", "--warmup", "1",
                                "--label", "same document", "--wait")
        self.assertEqual(res["state"], "succeeded", res.get("message"))
        doc = self.assert_same_document(res["id"])
        self.assertEqual(doc, res, "submit --wait --json prints the same document")
        self.assertEqual(doc["board"], "host-0")
        self.assertEqual(doc["measured"], "host")
        self.assertEqual(doc["provenance"]["measured"], "host")
        self.assertEqual(doc["label"], "same document")
        self.assertEqual([c["n"] for c in doc["cases"]], [5, 5, 5])
        for c in doc["cases"]:
            self.assertEqual(len(next(iter(c["samples"].values()))), 5)
            self.assertTrue(c["checksum_ok"])

    def test_a_job_queued_behind_a_reservation_is_one_document(self):
        carol = self.lab.add_user("carol", "member")  # the holder's own jobs would run
        self.lab.cli("reserve", "host-0", "--for", "1h", "--note", "document test")
        try:
            job_id = int(self.lab.cli("submit", "--board", "host-0", "--op",
                                      "fully_connected_s8", "--cases", self.fc,
                                      "--iterations", "1", token=carol).stdout.strip())
            doc = self.assert_same_document(job_id)
            self.assertEqual(doc["state"], "queued")
            self.assertIsNone(doc["provenance"])
            self.assertEqual(doc["wait"]["holder"], "admin")
            self.assertEqual(doc["wait"]["note"], "document test")
            self.assertEqual([c["n"] for c in doc["cases"]], [0, 0, 0])
            self.assertEqual(doc["measured"], "host", "labelled by the board it asked for")
            # The boards as `mculab boards --json` lists them are the API's, reservation included.
            boards = self.lab.cli_json("boards")
            self.assertEqual(boards, self.lab.api_json("api/v1/boards")["boards"])
            host = next(b for b in boards if b["name"] == "host-0")
            self.assertEqual((host["holder"], host["note"]), ("admin", "document test"))
            self.assertGreater(host["lease_until_ms"], 0)
            self.assertEqual(host["queue_length"], 1)
            self.lab.cli("cancel", str(job_id), token=carol)
        finally:
            self.lab.cli("release", "host-0")

    def test_a_job_cancelled_after_its_first_case_is_one_document(self):
        job_id = int(self.lab.cli("submit", "--board", "slow-0", "--op", "fully_connected_s8",
                                  "--cases", self.fc, "--iterations", "20").stdout.strip())
        lablib.wait_until(lambda: self.lab.cli_json("show", str(job_id)),
                          lambda j: j["cases"][0]["n"] == 20, timeout=60)
        self.lab.cli("cancel", str(job_id))
        slow = lambda: next(b for b in self.lab.cli_json("boards") if b["name"] == "slow-0")  # noqa: E731
        lablib.wait_until(slow, lambda b: b["state"] == "idle", timeout=60)
        doc = self.assert_same_document(job_id)
        self.assertEqual(doc["state"], "cancelled")
        self.assertEqual(doc["cases"][0]["n"], 20)
        self.assertEqual(doc["cases"][2]["n"], 0, "the last case never ran")
        self.assertIsNone(doc["cases"][2]["checksum_ok"])

    def assert_same_list(self, **filters):
        """`mculab jobs --json --KEY VALUE ...` is GET /api/v1/jobs?KEY=VALUE&... (the CLI's
        options are named as the API's parameters)."""
        flags = [x for k, v in filters.items() for x in (f"--{k}", str(v))]
        cli = self.lab.cli_json("jobs", *flags)
        self.assertEqual(cli, self.lab.api_json("api/v1/jobs?" + urllib.parse.urlencode(filters)),
                         filters)
        return cli

    def test_the_job_list_is_one_document(self):
        label = "listed job"
        done = []
        for i in range(3):
            res = self.lab.cli_json("submit", "--kind", "host", "--op", "fully_connected_s8",
                                    "--cases", self.fc, "--iterations", "2",
                                    "--label", f"{label} {i}", "--wait")
            self.assertEqual(res["state"], "succeeded", res.get("message"))
            done.append(res["id"])
        slow = int(self.lab.cli("submit", "--board", "slow-0", "--op", "fully_connected_s8",
                                "--cases", self.fc, "--iterations", "20",
                                "--label", f"{label} slow").stdout.strip())
        self.lab.cli("cancel", str(slow))
        board = lambda: next(b for b in self.lab.cli_json("boards") if b["name"] == "slow-0")  # noqa: E731
        lablib.wait_until(board, lambda b: b["state"] == "idle", timeout=60)
        self.lab.wait_job(slow)

        every = self.assert_same_list(label=label, limit=10)
        self.assertEqual(every["total"], 4)
        self.assertEqual([j["id"] for j in every["jobs"]], [slow] + done[::-1], "newest first")
        self.assertEqual([j["state"] for j in every["jobs"]], ["cancelled"] + ["succeeded"] * 3)
        page = self.assert_same_list(label=label, state="succeeded,cancelled", limit=2, offset=1)
        self.assertEqual((page["total"], page["offset"], page["limit"]), (4, 1, 2))
        self.assertEqual([j["id"] for j in page["jobs"]], [done[2], done[1]])
        on_host = self.assert_same_list(label=label, board="host-0", kind="host", user="admin",
                                        op="fully_connected_s8", state="succeeded", limit=10)
        self.assertEqual([j["id"] for j in on_host["jobs"]], done[::-1])
        before = self.assert_same_list(label=label, before=done[2], limit=10)
        self.assertEqual([j["id"] for j in before["jobs"]], done[1::-1])
        self.assertEqual(self.assert_same_list(label="no job has this label", limit=5),
                         {"total": 0, "offset": 0, "limit": 5, "jobs": []})

        # A listed job carries the job's fields of its own document, measured as it was.
        listed = next(j for j in every["jobs"] if j["id"] == done[0])
        doc = self.lab.cli_json("show", str(done[0]))
        self.assertEqual(listed, {k: doc[k] for k in listed})
        self.assertEqual((listed["board"], listed["measured"]), ("host-0", "host"))


if __name__ == "__main__":
    unittest.main(verbosity=2)
