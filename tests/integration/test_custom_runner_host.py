"""Integration: bring your own runtime on the host board. A real server + agent; the CLI uploads
the example runner (examples/custom_runner, built for Linux) and its model blob, the agent fetches
them into its artifact cache and runs them; provenance carries the runner's hash and checksums are
reported as not verified. Admission refuses what no board could run."""
import glob
import hashlib
import os
import struct
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import lablib  # noqa: E402


def sha256_file(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def arm32_elf_header():
    """The 52-byte header of a 32-bit little-endian ARM executable (nothing after it)."""
    ident = b"\x7fELF" + bytes([1, 1, 1]) + bytes(9)
    return ident + struct.pack("<HHIIIIIHHHHHH", 2, 40, 1, 0, 0, 0, 0, 52, 0, 0, 0, 0, 0)


class CustomRunnerHostTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.lab = lablib.Lab("custom-host", [
            lablib.custom_host_board("host-custom", ram_bytes=65536),
            lablib.host_board("host-locked"),
        ])
        cls.lab.__enter__()
        cls.blob = os.path.join(cls.lab.home, "model.bin")
        with open(cls.blob, "wb") as f:
            f.write(lablib.example_model_blob())
        cls.runner = lablib.EXAMPLE_RUNNER_HOST

    @classmethod
    def tearDownClass(cls):
        cls.lab.close()

    def submit(self, *args, check=True):
        return self.lab.cli("submit", "--board", "host-custom", "--firmware", self.runner,
                            *args, check=check)

    def test_example_runner_runs_end_to_end(self):
        res = self.lab.cli_json("submit", "--board", "host-custom", "--firmware", self.runner,
                                "--blob", self.blob, "--iterations", "5", "--warmup", "1",
                                "--label", "example host", "--wait")
        self.assertEqual(res["state"], "succeeded", res.get("message"))
        self.assertEqual(res["op"], "custom")
        runner_sha = sha256_file(self.runner)
        blob_sha = sha256_file(self.blob)
        self.assertEqual(res["firmware_artifact"], runner_sha)
        self.assertEqual(res["blob_artifact"], blob_sha)
        self.assertEqual(res["provenance"]["firmware_sha256"], runner_sha)
        self.assertEqual(len(res["provenance"]["workload_sha256"]), 64)
        self.assertEqual([c["id"] for c in res["cases"]], [0])
        case = res["cases"][0]
        self.assertEqual(case["n"], 5)
        self.assertGreater(case["min"], 0)
        self.assertFalse(case["checksum_verified"])
        self.assertIn("not verified (custom firmware)", res["message"])

        text = self.lab.cli("show", str(res["id"])).stdout
        self.assertIn("not verified (custom firmware)", text)
        self.assertIn(runner_sha + " (custom runner)", text)
        self.assertNotIn("MISMATCH", text)

        # The web page's API says the same: not verified, rather than ok or a mismatch.
        detail = self.lab.api_json(f"api/v1/jobs/{res['id']}")
        self.assertIs(detail["cases"][0]["checksum_verified"], False)
        self.assertIsNone(detail["cases"][0]["checksum_ok"])

        # The agent verified and cached both files under their hashes.
        cache = os.path.join(self.lab.home, "artifact-cache")
        self.assertTrue(os.path.exists(os.path.join(cache, runner_sha)))
        self.assertTrue(os.path.exists(os.path.join(cache, blob_sha)))

    def test_case_ids_from_a_commented_quoted_csv_and_the_cache_is_reused(self):
        # A comment, a quoted id and a quoted note holding a comma: the same dialect as --op's CSV.
        csv = lablib.write_csv(self.lab.home, "ids.csv",
                               "id,note\n# two cases\n3,\"first, of two\"\n\"7\",second\n")
        res = self.lab.cli_json("submit", "--board", "host-custom", "--firmware", self.runner,
                                "--blob", self.blob, "--cases", csv, "--iterations", "3", "--wait")
        self.assertEqual(res["state"], "succeeded", res.get("message"))
        self.assertEqual([c["id"] for c in res["cases"]], [3, 7])
        self.assertTrue(all(c["n"] == 3 for c in res["cases"]))
        fetched_before = sum("artifact cache: fetched" in l for l in self.lab.agent.lines)
        again = self.lab.cli_json("submit", "--board", "host-custom", "--firmware", self.runner,
                                  "--blob", self.blob, "--iterations", "2", "--wait")
        self.assertEqual(again["state"], "succeeded", again.get("message"))
        fetched_after = sum("artifact cache: fetched" in l for l in self.lab.agent.lines)
        self.assertEqual(fetched_after, fetched_before, "a cached artifact was fetched again")

    def test_a_corrupt_cache_entry_is_fetched_again(self):
        res = self.lab.cli_json("submit", "--board", "host-custom", "--firmware", self.runner,
                                "--blob", self.blob, "--iterations", "2", "--wait")
        self.assertEqual(res["state"], "succeeded", res.get("message"))
        blob_path = os.path.join(self.lab.home, "artifact-cache", sha256_file(self.blob))
        with open(blob_path, "r+b") as f:
            f.write(b"XXXX")  # breaks the magic: the runner would refuse it
        res = self.lab.cli_json("submit", "--board", "host-custom", "--firmware", self.runner,
                                "--blob", self.blob, "--iterations", "2", "--wait")
        self.assertEqual(res["state"], "succeeded", res.get("message"))
        self.assertEqual(sha256_file(blob_path), sha256_file(self.blob))

    def test_admission_refuses_an_arm_elf_for_the_host_board(self):
        elf = os.path.join(self.lab.home, "arm.elf")
        with open(elf, "wb") as f:
            f.write(arm32_elf_header())
        r = self.lab.cli("submit", "--board", "host-custom", "--firmware", elf, check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("ARM 32-bit", r.stderr)
        self.assertIn("an x86-64 ELF needed", r.stderr)  # names what the board needs
        self.assertIn("host-custom", r.stderr)

    def test_not_an_elf_is_refused_before_uploading(self):
        script = os.path.join(self.lab.home, "runner.sh")
        with open(script, "w") as f:
            f.write("#!/bin/sh\necho hi\n")
        r = self.lab.cli("submit", "--board", "host-custom", "--firmware", script, check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("not an ELF file", r.stderr)
        self.assertIn("script", r.stderr)

    def test_a_blob_larger_than_the_board_ram_is_refused(self):
        big = os.path.join(self.lab.home, "big.bin")
        with open(big, "wb") as f:
            f.write(bytes(70000))
        r = self.submit("--blob", big, check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("does not fit board host-custom", r.stderr)

    def test_a_blob_without_firmware_is_a_usage_error(self):
        r = self.lab.cli("submit", "--kind", "host", "--blob", self.blob, check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("--blob needs --firmware", r.stderr)

    def test_a_host_board_without_permission_is_refused_at_submit(self):
        # The agent said at registration that host-locked takes no custom runners: the submit is
        # refused before any job exists, naming the board and the setting to change.
        before = self.lab.cli_json("jobs")
        r = self.lab.cli("submit", "--board", "host-locked", "--firmware", self.runner, "--blob",
                         self.blob, "--iterations", "2", "--wait", check=False)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("a custom runner cannot run on board host-locked", r.stderr)
        self.assertIn("allow_custom_runners = true", r.stderr)
        self.assertEqual(self.lab.cli_json("jobs"), before)
        r = self.lab.cli("submit", "--kind", "host", "--firmware", self.runner, "--blob",
                         self.blob, "--iterations", "2", "--wait", "--json")
        import json
        self.assertEqual(json.loads(r.stdout)["state"], "succeeded",
                         "a kind with one board that takes them runs it there")


if __name__ == "__main__":
    unittest.main()
