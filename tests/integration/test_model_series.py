"""Integration: model jobs know which model they ran, and a series is one model (issue 25).

On the host board: three jobs of model A (kws.tflite), two of a different model B
(resnet.tflite), then one job of another file saved under A's name. Each job keeps the file name
as submitted, the SHA-256 of the .tflite and its graph summary (`mculab show`, `mculab jobs`, the
API); the history filters by model name; A's series has A's four jobs only, the last one marked as
a model change (like a runner change); B's series has B's two jobs; a series of model jobs without
a model name is refused, saying why; `mculab trend --job` takes the model from the job. A layer
name of 100 characters comes back whole."""
import hashlib
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import lablib  # noqa: E402


def write_model(path, seed):
    subprocess.run([os.path.join(lablib.BIN, "mculab-tflite-writer"), "--seed", str(seed), path],
                   check=True, capture_output=True)
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class ModelSeriesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.lab = lablib.Lab("model-series", [lablib.host_board("host-0")])
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
    def submit(cls, path):
        res = cls.lab.cli_json("submit", "--board", "host-0", "--model", path, "--iterations", "8",
                               "--wait", timeout=300)
        assert res["state"] == "succeeded", res
        return res["id"]

    @classmethod
    def run_jobs(cls):
        home = cls.lab.home
        for d in ("v1", "v2"):
            os.makedirs(os.path.join(home, d))
        a1 = os.path.join(home, "v1", "kws.tflite")
        a2 = os.path.join(home, "v2", "kws.tflite")  # another file, the same name
        b = os.path.join(home, "v1", "resnet.tflite")
        cls.sha_a1 = write_model(a1, 7)
        cls.sha_a2 = write_model(a2, 11)
        cls.sha_b = write_model(b, 9)
        assert len({cls.sha_a1, cls.sha_a2, cls.sha_b}) == 3
        cls.a = [cls.submit(a1) for _ in range(3)]
        cls.b = [cls.submit(b) for _ in range(2)]
        cls.a.append(cls.submit(a2))

    def test_a_model_job_keeps_the_models_name_hash_and_summary(self):
        job = self.lab.api_json(f"api/v1/jobs/{self.a[0]}")
        self.assertEqual(job["model_name"], "kws.tflite")
        self.assertEqual(job["model_sha256"], self.sha_a1)
        self.assertRegex(job["model_summary"], r"^\d+ operators, \d+ MACs, input [0-9x]+ int8, "
                                               r"output [0-9x]+ int8$")
        shown = self.lab.cli("show", str(self.a[0])).stdout
        self.assertIn("model kws.tflite on host-0", shown)
        self.assertIn("model: kws.tflite, sha256 " + self.sha_a1, shown)
        listed = self.lab.cli("jobs").stdout
        self.assertIn("model resnet.tflite", listed)

    def test_the_history_filters_by_model_name(self):
        page = self.lab.api_json("api/v1/jobs?model=resnet.tflite")
        self.assertEqual(sorted(j["id"] for j in page["jobs"]), sorted(self.b))
        self.assertEqual(page["total"], 2)
        listed = self.lab.cli_json("jobs", "--model", "kws.tflite")
        self.assertEqual(sorted(j["id"] for j in listed["jobs"]), sorted(self.a))

    def test_two_models_are_two_series_and_a_new_file_is_marked_like_a_runner_change(self):
        a = self.lab.api_json("api/v1/series?kind=host&op=model&case=0&model=kws.tflite")
        self.assertEqual([j["id"] for j in a["jobs"]], self.a)
        self.assertEqual([j["model_sha256"] for j in a["jobs"]], [self.sha_a1] * 3 + [self.sha_a2])
        self.assertEqual([j["model_changed"] for j in a["jobs"]], [False, False, False, True])
        self.assertEqual([j["runner_changed"] for j in a["jobs"]], [False, False, False, True])
        b = self.lab.api_json("api/v1/series?kind=host&op=model&case=0&model=resnet.tflite")
        self.assertEqual([j["id"] for j in b["jobs"]], self.b)
        self.assertEqual(b["changes"], [])
        self.assertFalse(any(j["model_changed"] for j in b["jobs"]))

    def test_a_model_series_without_a_model_is_refused_saying_why(self):
        status, _, body = self.lab.http_get("api/v1/series?kind=host&op=model&case=0")
        self.assertEqual(status, 400, body)
        self.assertIn(b"model's file name", body)

    def test_the_cli_trend_of_a_job_is_its_models_series(self):
        t = self.lab.cli_json("trend", "--job", str(self.b[0]), "--case", "0")
        self.assertEqual(t["series"]["model"], "resnet.tflite")
        self.assertEqual([j["id"] for j in t["jobs"]], self.b)
        table = self.lab.cli("trend", "--job", str(self.a[0]), "--case", "0").stdout
        self.assertIn("model file changed", table)


class WholeLayerNamesTest(unittest.TestCase):
    """A layer name of 100 characters and a type of 17 (DEPTHWISE_CONV_2D) come back whole in the
    JSON: the runner sends them cut to 31 and 15, the server fills them in from the model."""

    def test_a_layer_name_of_100_characters_round_trips_whole(self):
        with lablib.Lab("model-names", [lablib.host_board("host-0")]) as lab:
            path = os.path.join(lab.home, "long.tflite")
            subprocess.run([os.path.join(lablib.BIN, "mculab-tflite-writer"), "--long-names",
                            path], check=True, capture_output=True)
            res = lab.cli_json("submit", "--board", "host-0", "--model", path, "--iterations",
                               "3", "--wait", timeout=300)
            self.assertEqual(res["state"], "succeeded", res)
            shown = lab.cli_json("show", str(res["id"]))
            ops = shown["ops"]
            self.assertTrue(ops, shown.keys())
            names = {o["name"] for o in ops}
            types = {o["type"] for o in ops}
            self.assertTrue(all(len(n) == 100 for n in names), names)
            self.assertIn("DEPTHWISE_CONV_2D", types)
            api = lab.api_json(f"api/v1/jobs/{res['id']}")
            self.assertEqual({o["name"] for o in api["ops"]}, names)


if __name__ == "__main__":
    unittest.main()
