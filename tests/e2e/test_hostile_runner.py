"""End to end: a member's own runner that attacks the agent's machine, through the real lab (CLI,
server, agent, QEMU and host boards). The hostile runner (tests/hostile_runner/main.c) tries, one
attack per job: to run a host command (semihosting SYS_SYSTEM on QEMU; creating a file on the host
board), to read the agent's token file (SYS_OPEN/SYS_READ; open()), and an undefined instruction
on QEMU / a TCP connection to the lab server on the host board.

Each job must fail as the job's own failure (workload), with no message saying ESCAPED; nothing
is created or read on the agent's machine; the board stays healthy and runs the next job."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import lablib  # noqa: E402

ELF = lablib.HOSTILE_RUNNER_AN547_ELF
HOST = lablib.HOSTILE_RUNNER_HOST
ATTACKS = {1: "run a host command", 2: "read the agent's token", 3: "undefined instruction / network",
           4: "swap the run folder's files and its stderr for links to the agent's token"}


class HostileRunnerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        boards = [lablib.custom_host_board("host-custom")]
        cls.qemu = bool(ELF and os.path.exists(ELF) and lablib.AN547_ELF)
        if cls.qemu:
            boards.append(lablib.qemu_board("an547-custom", allow_custom_runners=True))
        cls.lab = lablib.Lab("hostile", boards)
        cls.lab.__enter__()
        cls.token_file = os.path.join(cls.lab.home, f"{cls.lab.agent_name}.token")
        cls.marker = os.path.join(cls.lab.home, "pwned-by-runner")
        port = cls.lab.address.rsplit(":", 1)[1]
        cls.blob = os.path.join(cls.lab.home, "targets.txt")
        with open(cls.blob, "w") as f:
            f.write(f"{cls.token_file}\n{cls.marker}\n{port}\n")
        with open(cls.token_file) as f:
            cls.token = f.read().strip()

    @classmethod
    def tearDownClass(cls):
        cls.lab.close()

    def attack(self, board, runner, case_id):
        csv = lablib.write_csv(self.lab.home, f"attack{case_id}.csv", f"id\n{case_id}\n")
        res = self.lab.cli_json("submit", "--board", board, "--firmware", runner, "--blob",
                                self.blob, "--cases", csv, "--iterations", "1", "--wait",
                                timeout=300, check=False)
        what = f"{ATTACKS[case_id]} on {board}: {res.get('message')}"
        print(what)
        self.assertEqual(res["state"], "failed", what)
        self.assertNotIn("ESCAPED", res.get("message", ""), what)
        self.assertNotIn(self.token, str(res), what)
        self.assertFalse(os.path.exists(self.marker), "the runner created a file on the host")
        return res

    def assert_board_healthy(self, board):
        boards = {b["name"]: b for b in self.lab.cli_json("boards")}
        self.assertEqual(boards[board]["health"], "good", boards[board])

    def test_host_board_runner_cannot_reach_the_agents_machine(self):
        for case_id in (1, 2, 3):
            res = self.attack("host-custom", HOST, case_id)
            self.assertIn("blocked", res["message"], res["message"])
        self.assert_board_healthy("host-custom")

    def test_host_board_agent_reads_no_file_the_runner_swapped_for_a_link(self):
        # The runner links every file of its folder, and its stderr's, to the agent's token and
        # dies: the job's message carries the runner's own stderr, never the token.
        res = self.attack("host-custom", HOST, 4)
        self.assertIn("hostile-runner-stderr-marker", res["message"], res["message"])
        self.assert_board_healthy("host-custom")

    def test_qemu_runner_gets_no_semihosting(self):
        if not self.qemu:
            self.skipTest("the an547 hostile runner was not built (arm-none-eabi-gcc missing)")
        for case_id in (1, 2, 3):
            res = self.attack("an547-custom", ELF, case_id)
            # Without semihosting, BKPT 0xAB and UDF fault: the runner library reports the fault.
            self.assertIn("fault", res["message"], res["message"])
        self.assert_board_healthy("an547-custom")
        # The board still runs the lab's own runner afterwards.
        csv = lablib.write_csv(self.lab.home, "fc.csv", "id,batch,input_size,output_size\n0,1,16,8\n")
        ok = self.lab.cli_json("submit", "--board", "an547-custom", "--op", "fully_connected_s8",
                               "--cases", csv, "--iterations", "2", "--wait", timeout=300)
        self.assertEqual(ok["state"], "succeeded", ok.get("message"))


if __name__ == "__main__":
    unittest.main()
