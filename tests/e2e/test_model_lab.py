"""End to end: `mculab submit --model FILE [--input FILE.bin]` on the emulated Cortex-M55 (QEMU
mps3-an547), the emulated Cortex-M7 (QEMU mps2-an500) and the host runner. The CLI uploads the
model; the server parses it at admission (refusing an operator the runner lacks, naming it and the
operators it has, and a board too small, giving both sizes); the agent runs the board's own TFLite
runner and checks every output checksum against the same interpreter built for its host. The
sample model from tools/tflite_writer always runs; the four MLPerf Tiny models run when
../shared/models/mlperf-tiny is there (MCULAB_SHARED_MODELS_DIR), and every board must give the
same output."""
import hashlib
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import lablib  # noqa: E402

REPO = os.path.join(os.path.dirname(__file__), "..", "..")
MODELS_DIR = os.path.join(os.environ.get("MCULAB_SHARED_MODELS_DIR",
                                         os.path.join(REPO, "..", "shared", "models")),
                          "mlperf-tiny")
MLPERF = ["kws_ref_model.tflite", "ic_resnet8_int8.tflite", "vww_96_int8.tflite",
          "ad01_int8.tflite"]


def tflite_runner_beside(elf):
    """The TFLite runner the agent picks for a board: beside its generic runner."""
    if not elf:
        return ""
    d, name = os.path.split(elf)
    return os.path.join(d, name.replace("mculab-runner-", "mculab-tflite-runner-"))


def boards():
    """(name, board config) of every board kind this build can run models on."""
    out = []
    if lablib.AN547_ELF and os.path.exists(tflite_runner_beside(lablib.AN547_ELF)):
        out.append(lablib.qemu_board("an547-0"))
    if lablib.AN500_ELF and os.path.exists(tflite_runner_beside(lablib.AN500_ELF)):
        out.append(lablib.an500_board("an500-0"))
    out.append(lablib.host_board("host-0"))
    small = lablib.host_board("host-small")
    small["kind"] = "host-small"
    small["ram_bytes"] = 16384
    out.append(small)
    return out


class ModelLabTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.boards = boards()
        cls.lab = lablib.Lab("model-lab", cls.boards)
        cls.lab.__enter__()
        cls.sample = os.path.join(cls.lab.home, "sample.tflite")
        subprocess.run([os.path.join(lablib.BIN, "mculab-tflite-writer"), "--seed", "7",
                        cls.sample], check=True, capture_output=True)
        cls.inspected = json.loads(subprocess.run(
            [os.path.join(lablib.BIN, "mculab"), "models", "inspect", "--json", cls.sample],
            check=True, capture_output=True, text=True).stdout)

    @classmethod
    def tearDownClass(cls):
        cls.lab.close()

    def board_names(self):
        return [b["name"] for b in self.boards if b["name"] != "host-small"]

    def submit(self, model, board, *extra):
        res = self.lab.cli_json("submit", "--board", board, "--model", model, "--iterations", "2",
                                "--warmup", "1", "--wait", *extra, timeout=1200, check=False)
        return res

    def check_ran(self, res, board):
        self.assertEqual(res["state"], "succeeded", f"{board}: {res.get('message')}")
        case = res["cases"][0]
        self.assertEqual(case["n"], 2)
        # The board's output is the host interpreter's (the agent checks it).
        self.assertTrue(case["checksum_verified"], board)
        self.assertTrue(case["checksum_ok"], board)
        # Emulated time is deterministic: after the warm-up, both inferences count the same.
        if board != "host-0":
            values = next(iter(case["samples"].values()))
            self.assertEqual(len(set(values)), 1, values)
        return case["checksum"]

    def test_sample_model_on_every_board(self):
        sums = {}
        for board in self.board_names():
            res = self.submit(self.sample, board)
            sums[board] = self.check_ran(res, board)
            self.assertIn("input seeded", res["provenance"]["note"])
            ops = self.lab.cli("show", str(res["id"]), "--ops").stdout
            # (the op type travels in 15 characters; the server names it whole from the model)
            for kind in ("CONV_2D", "DEPTHWISE_CONV_2D", "ADD", "MAX_POOL_2D", "AVERAGE_POOL_2D",
                         "RESHAPE", "FULLY_CONNECTED", "SOFTMAX"):
                self.assertIn(kind, ops, f"{board}: {ops}")
            # The runner's plan: the arena the model's activations take, and the model itself.
            runner = res["memory"]["runner"]
            self.assertEqual(runner["arena_used_bytes"], self.inspected["arena_bytes"])
            self.assertEqual(runner["model_used_bytes"], os.path.getsize(self.sample))
        self.assertEqual(len(set(sums.values())), 1, sums)

    def test_the_two_emulated_boards_compare_in_instructions_without_a_verdict(self):
        """The same model on the emulated M55 and M7: both in executed instructions (the unit
        every emulated board shares), and the compare gives their ratio but no faster/slower."""
        names = self.board_names()
        if "an547-0" not in names or "an500-0" not in names:
            self.skipTest("needs both emulated boards (an547 and an500 TFLite runners)")
        ids = []
        for board in ("an547-0", "an500-0"):
            res = self.submit(self.sample, board)
            self.check_ran(res, board)
            self.assertEqual(res["provenance"]["timer_unit"], "instructions", board)
            ids.append(res["id"])
        c = self.lab.api_json(f"api/v1/compare?jobs={ids[0]},{ids[1]}")
        self.assertIsNone(c["ratio_refused"], c)
        self.assertIn("different emulated board kinds", c["verdict_refused"] or "", c)
        self.assertEqual([j["unit"] for j in c["jobs"]], ["instructions", "instructions"])
        self.assertIsNotNone(c["cases"][0]["ratios"][1], "the ratio of instruction counts stands")

    def test_float_interface_model_on_every_board(self):
        """QUANTIZE (float32 -> int8, int8 -> int8) and DEQUANTIZE (int8 -> float32): the boards'
        float arithmetic gives the host's bytes."""
        path = os.path.join(self.lab.home, "float_io.tflite")
        subprocess.run([os.path.join(lablib.BIN, "mculab-tflite-writer"), "--float-io", path],
                       check=True, capture_output=True)
        sums = {}
        for board in self.board_names():
            res = self.submit(path, board)
            sums[board] = self.check_ran(res, board)
            ops = self.lab.cli("show", str(res["id"]), "--ops").stdout
            self.assertIn("QUANTIZE", ops)
            self.assertIn("DEQUANTIZE", ops)
        self.assertEqual(len(set(sums.values())), 1, sums)

    def test_given_input_replaces_the_seeded_one(self):
        data = bytes((i * 37 + 11) % 256 for i in range(16 * 16 * 3))
        path = os.path.join(self.lab.home, "input.bin")
        with open(path, "wb") as f:
            f.write(data)
        seeded = self.check_ran(self.submit(self.sample, "host-0"), "host-0")
        sums = {}
        for board in self.board_names():
            res = self.submit(self.sample, board, "--input", path)
            sums[board] = self.check_ran(res, board)
            self.assertIn("input given (768 bytes, SHA-256 " + hashlib.sha256(data).hexdigest(),
                          res["provenance"]["note"])
        self.assertEqual(len(set(sums.values())), 1, sums)
        self.assertNotEqual(seeded, sums["host-0"])

        short = os.path.join(self.lab.home, "short.bin")
        with open(short, "wb") as f:
            f.write(data[:100])
        r = self.lab.cli("submit", "--board", "host-0", "--model", self.sample, "--input", short,
                         check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("the given input has 100 bytes", r.stderr)
        self.assertIn("takes 768 bytes", r.stderr)

    def test_unsupported_operator_is_refused_at_admission(self):
        bad = os.path.join(self.lab.home, "div.tflite")
        subprocess.run([os.path.join(lablib.BIN, "mculab-tflite-writer"), "--last-op", "42", bad],
                       check=True, capture_output=True)
        # The CLI checks before uploading...
        r = self.lab.cli("submit", "--board", "host-0", "--model", bad, check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("DIV", r.stderr)
        self.assertIn("CONV_2D, DEPTHWISE_CONV_2D", r.stderr)
        # ...and `models inspect` says the same without a server.
        r = subprocess.run([os.path.join(lablib.BIN, "mculab"), "models", "inspect", bad],
                           capture_output=True, text=True)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("DIV (builtin code 42, first at operator 8)", r.stderr)

    def test_board_too_small_is_refused_with_both_sizes(self):
        r = self.lab.cli("submit", "--kind", "host-small", "--model", self.sample, check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("needs", r.stderr)
        self.assertIn("planned arena", r.stderr)
        self.assertIn("host-small (16384 bytes)", r.stderr)

    def test_inspect_prints_the_graph(self):
        r = subprocess.run([os.path.join(lablib.BIN, "mculab"), "models", "inspect", "--json",
                            self.sample], capture_output=True, text=True, check=True)
        g = json.loads(r.stdout)
        self.assertEqual([l["type"] for l in g["layers"]],
                         ["CONV_2D", "DEPTHWISE_CONV_2D", "CONV_2D", "ADD", "MAX_POOL_2D",
                          "AVERAGE_POOL_2D", "RESHAPE", "FULLY_CONNECTED", "SOFTMAX"])
        # conv1: 8x8x8 outputs of a 3x3x3 window each.
        self.assertEqual(g["layers"][0]["macs"], 8 * 8 * 8 * 3 * 3 * 3)
        self.assertEqual(g["layers"][0]["params"], "3x3 /2x2 SAME RELU6")
        self.assertEqual(g["macs"], sum(l["macs"] for l in g["layers"]))
        self.assertGreater(g["arena_bytes"], 0)
        self.assertLessEqual(g["arena_bytes"], g["naive_bytes"])

    def test_fast_and_reference_kernels_give_the_same_output_and_name_their_set(self):
        """The M55's one TFLite runner: `--kernels reference` and the default (the Helium set)
        give the same output checksums, each run's HELLO and provenance name the set that ran,
        the Helium one counts MVE instructions in its conv and fully connected layers and fewer
        instructions in all, and the compare view sets the two side by side, layer by layer."""
        if "an547-0" not in self.board_names():
            self.skipTest("the an547 TFLite runner was not built")
        models = [self.sample] + [os.path.join(MODELS_DIR, m) for m in MLPERF
                                  if os.path.exists(os.path.join(MODELS_DIR, m))]
        for model in models:
            with self.subTest(model=os.path.basename(model)):
                runs = {}
                for kernels in ("reference", "fast"):
                    res = self.submit(model, "an547-0", "--kernels", kernels,
                                      "--events", "instructions,mve_instructions")
                    self.check_ran(res, "an547-0")
                    events = {e["event"]: e["median"] for e in res["events"]}
                    runs[kernels] = (res["cases"][0]["checksum"], events, res)
                ref, fast = runs["reference"], runs["fast"]
                self.assertEqual(ref[0], fast[0])
                self.assertEqual(ref[2]["kernels"], "reference")
                self.assertEqual(fast[2]["kernels"], "fast")
                self.assertEqual(ref[2]["provenance"]["kernel_set"], "reference")
                self.assertEqual(fast[2]["provenance"]["kernel_set"], "helium")
                self.assertIn("(tflite-helium)", fast[2]["provenance"]["runner_version"])
                self.assertIn("(tflite)", ref[2]["provenance"]["runner_version"])
                self.assertGreater(fast[1]["mve_instructions"], 0)
                self.assertLess(fast[1]["instructions"], ref[1]["instructions"])
                # Per layer: the conv and fully connected layers count MVE instructions.
                ops = self.lab.cli("show", str(fast[2]["id"]), "--ops").stdout
                self.assertIn("mve_instructions", ops)
                # What the page's per-layer bars and compare read (web/js/layers.js).
                a, b = ref[2]["id"], fast[2]["id"]
                rows = [r for r in self.lab.api_json(f"api/v1/jobs/{b}")["ops"]
                        if r["metric"] == "mve_instructions"]
                self.assertTrue(rows and all(isinstance(r["op_index"], int) for r in rows))
                self.assertTrue(any(r["type"] in ("CONV_2D", "FULLY_CONNECTED") and r["mean"] > 0
                                    for r in rows), rows)
                cmp = self.lab.api_json(f"api/v1/compare?jobs={a},{b}")
                self.assertIsNone(cmp["ratio_refused"], "the same model on two kernel sets")
                self.assertEqual([j["kernel_set"] for j in cmp["jobs"]], ["reference", "helium"])

    def test_mobilenet_v2_on_every_board(self):
        """MobileNetV2 int8 at 224x224 as PyTorch's exporter writes it (the writer's, seeded: a
        4 MB model, 71 operators with an operator code each, 301 M MACs, a 2.6 MB arena): one
        inference on every board, the same output everywhere, every operator profiled."""
        path = os.path.join(self.lab.home, "mobilenet_v2.tflite")
        subprocess.run([os.path.join(lablib.BIN, "mculab-tflite-writer"), "--mobilenet-v2", path],
                       check=True, capture_output=True)
        inspected = json.loads(self.lab.cli("models", "inspect", "--json", path).stdout)
        self.assertEqual(len(inspected["layers"]), 71)
        sums = {}
        for board in self.board_names():
            with self.subTest(board=board):
                res = self.lab.cli_json("submit", "--board", board, "--model", path,
                                        "--iterations", "1", "--wait", timeout=1200, check=False)
                self.assertEqual(res["state"], "succeeded", f"{board}: {res.get('message')}")
                case = res["cases"][0]
                self.assertTrue(case["checksum_verified"] and case["checksum_ok"], board)
                sums[board] = case["checksum"]
                self.assertEqual(res["memory"]["runner"]["arena_used_bytes"],
                                 inspected["arena_bytes"], board)
                self.assertEqual(res["memory"]["runner"]["model_used_bytes"],
                                 os.path.getsize(path), board)
                self.assertEqual(sorted({o["op_index"] for o in res["ops"]}), list(range(71)), board)
        self.assertEqual(len(set(sums.values())), 1, sums)

    @unittest.skipUnless(os.path.isdir(MODELS_DIR),
                         f"the MLPerf Tiny models are not at {MODELS_DIR} "
                         "(set MCULAB_SHARED_MODELS_DIR); the sample model still ran")
    def test_mlperf_tiny_models_on_every_board(self):
        for model in MLPERF:
            path = os.path.join(MODELS_DIR, model)
            sums = {}
            for board in self.board_names():
                with self.subTest(model=model, board=board):
                    res = self.submit(path, board)
                    sums[board] = self.check_ran(res, board)
            self.assertEqual(len(set(sums.values())), 1, f"{model}: {sums}")


if __name__ == "__main__":
    unittest.main()
