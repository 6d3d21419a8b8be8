"""End to end: bring your own runtime on QEMU mps3-an547. The CLI uploads the example runner's an547
ELF (examples/custom_runner) and its model blob; the agent fetches them, QEMU boots the ELF with the
blob placed by the loader device; the job succeeds, provenance carries the ELF's hash and the
checksums are reported as not verified."""
import hashlib
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import lablib  # noqa: E402

ELF = lablib.EXAMPLE_RUNNER_AN547_ELF


def elf_section_size(path, name):
    """The size of section `name` as binutils' readelf reports it (an independent reader)."""
    out = subprocess.run(["readelf", "-SW", path], capture_output=True, text=True,
                         check=True).stdout
    for line in out.splitlines():
        fields = line.replace("[ ", "[").split()
        if len(fields) > 5 and fields[1] == name:
            return int(fields[5], 16)
    raise AssertionError(f"no section {name} in {path}")


def sha256_file(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


@unittest.skipUnless(ELF and os.path.exists(ELF) and lablib.AN547_ELF,
                     "the an547 example runner was not built (arm-none-eabi-gcc missing)")
class CustomRunnerQemuTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        board = lablib.qemu_board(allow_custom_runners=True)
        board["ram_bytes"] = 1048576
        cls.lab = lablib.Lab("custom-qemu", [board])
        cls.lab.__enter__()
        cls.blob = os.path.join(cls.lab.home, "model.bin")
        with open(cls.blob, "wb") as f:
            f.write(lablib.example_model_blob())

    @classmethod
    def tearDownClass(cls):
        cls.lab.close()

    def test_example_runner_elf_with_a_blob(self):
        res = self.lab.cli_json("submit", "--kind", "corstone300-qemu", "--firmware", ELF,
                                "--blob", self.blob, "--iterations", "4", "--warmup", "1",
                                "--wait", timeout=600)
        self.assertEqual(res["state"], "succeeded", res.get("message"))
        prov = res["provenance"]
        self.assertEqual(prov["firmware_sha256"], sha256_file(ELF))
        self.assertNotEqual(prov["firmware_sha256"], sha256_file(lablib.AN547_ELF))
        self.assertTrue(prov["emulated"])
        self.assertEqual(prov["timer_unit"], "instructions")
        self.assertIn("GCC", prov["toolchain"])
        case = res["cases"][0]
        self.assertEqual(case["n"], 4)
        self.assertGreater(case["min"], 0)
        self.assertFalse(case["checksum_verified"])
        # Deterministic emulated time: the same model gives the same count every iteration.
        values = next(iter(case["samples"].values()))
        self.assertEqual(len(set(values)), 1, values)

        text = self.lab.cli("show", str(res["id"])).stdout
        self.assertIn("not verified (custom firmware)", text)
        self.assertIn(sha256_file(ELF) + " (custom runner)", text)

        # Per-op profiles from a custom runner: the example runner's per-op samples (mculab_op_begin/end around its two ops)
        # and its memory report appear in `mculab show`, labelled emulated.
        ops = self.lab.cli("show", str(res["id"]), "--ops").stdout
        self.assertIn("EMULATED", ops)
        for name, kind in (("conv1", "CONV_2D"), ("fc1", "FULLY_CONNECTED")):
            row = next((line for line in ops.splitlines() if line.rstrip().endswith(name)), None)
            self.assertIsNotNone(row, ops)
            self.assertIn(kind, row)
            self.assertRegex(row, r"^\s*\d+(\.\d+)?%\s+\d+\s+4\s")  # share, total, 4 calls
        by_op = {o["name"]: o for o in res["ops"]}
        self.assertEqual(by_op["conv1"]["count"], 4)
        self.assertGreater(by_op["conv1"]["sum"], by_op["fc1"]["sum"])
        self.assertIn("memory (EMULATED board", text)
        self.assertIn("runner reports", text)
        mem = res["memory"]  # the API's object (docs/http-api.md)
        self.assertGreater(mem["runner"]["arena_used_bytes"], 0)
        self.assertGreater(mem["runner"]["stack_used_bytes"], 0)
        # The ELF figures are the custom runner's, not the board's own runner's.
        self.assertEqual(mem["flash"]["text_bytes"], elf_section_size(ELF, ".text"))

    def test_the_generic_runner_elf_is_not_an_x86_host_binary(self):
        # The host example runner is refused for the QEMU board at submit time.
        host = lablib.EXAMPLE_RUNNER_HOST
        r = self.lab.cli("submit", "--kind", "corstone300-qemu", "--firmware", host, check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("is ARM 32-bit (Cortex-M)", r.stderr)


if __name__ == "__main__":
    unittest.main()
