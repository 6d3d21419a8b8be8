"""Integration: accounts and auth with the real programs: admin commands, tokens on the
CLI, the agent and the HTTP API, revocation, and TLS with a self-signed certificate."""
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import lablib  # noqa: E402

FC_CSV = "id,batch,input_size,output_size\n0,1,64,32\n"


class AuthTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.lab = lablib.Lab("auth-lab", [lablib.host_board()])
        cls.lab.__enter__()
        cls.fc = lablib.write_csv(cls.lab.home, "fc.csv", FC_CSV)

    @classmethod
    def tearDownClass(cls):
        cls.lab.close()

    def submit(self, token, check=False):
        return self.lab.cli("submit", "--kind", "host", "--op", "fully_connected_s8", "--cases",
                            self.fc, "--iterations", "2", "--json", token=token, check=check)

    def test_without_a_token_the_cli_says_how_to_get_one(self):
        r = self.lab.cli("boards", token="", check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("no valid token", r.stderr)
        self.assertIn("mculab-server admin user add", r.stderr)
        r = self.lab.cli("boards", token="mcl_u_" + "0" * 40, check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("is not known to this server", r.stderr)

    def test_roles_viewer_reads_member_submits_and_cancels_only_own_jobs(self):
        viewer = self.lab.add_user("vic", "viewer")
        member = self.lab.add_user("meg", "member")
        other = self.lab.add_user("oscar", "member")
        self.assertEqual(json.loads(self.lab.cli("boards", "--json", token=viewer).stdout)[0]["name"],
                         "host-0")
        r = self.submit(viewer)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("needs the member role; vic is viewer", r.stderr)
        job = json.loads(self.submit(member, check=True).stdout)["id"]
        jobs = self.lab.cli_json("jobs", "--user", "meg", token=viewer)["jobs"]
        self.assertIn(job, [j["id"] for j in jobs])
        r = self.lab.cli("cancel", str(job), token=other, check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn(f"job {job} belongs to meg", r.stderr)
        r = self.lab.cli("cancel", str(job), token=member, check=False)  # may have finished
        self.assertNotIn("belongs to", r.stderr)

    def test_admin_commands_list_and_revoke_and_say_what_was_wrong(self):
        token = self.lab.add_user("rita", "member")
        self.assertRegex(token, r"^mcl_u_[0-9a-f]{40}$")
        listing = self.lab.admin("user", "list").stdout
        self.assertRegex(listing, r"rita\s+member")
        self.assertIn(token[:14], listing)
        self.assertNotIn(token, listing)
        self.assertRegex(listing, rf"{self.lab.agent_name}\s+agent")
        dup = self.lab.admin("user", "add", "rita", "--role", "member", check=False)
        self.assertEqual(dup.returncode, 1)
        self.assertIn("user rita already exists", dup.stderr)
        bad = self.lab.admin("user", "add", "sam", "--role", "root", check=False)
        self.assertIn("unknown role 'root' (roles: admin, member, viewer)", bad.stderr)
        gone = self.lab.admin("token", "revoke", "mcl_u_ffffffff", check=False)
        self.assertEqual(gone.returncode, 1)
        self.assertIn("no token", gone.stderr)
        self.lab.cli("boards", token=token)
        out = self.lab.admin("token", "revoke", token[:14]).stdout
        self.assertIn("revoked user token", out)
        self.assertIn(f"{token[:14]} (revoked)", self.lab.admin("user", "list").stdout)
        # The server caches a valid token for at most 2 s; a refusal comes within that, without
        # sleeping here for a fixed time.
        r = lablib.wait_until(lambda: self.lab.cli("boards", token=token, check=False),
                              lambda r: r.returncode != 0, timeout=30)
        self.assertIn("was revoked", r.stderr)
        second = self.lab.admin("token", "add", "rita").stdout.strip()
        self.lab.cli("boards", token=second)

    def test_agent_and_user_tokens_do_not_mix(self):
        r = self.lab.cli("boards", token=self.lab.agent_token, check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("only good for the agent link", r.stderr)
        self.assertIn(f"agent {self.lab.agent_name} connected from",
                      "".join(self.lab.server.lines))

    def test_http_api_needs_a_token_but_healthz_and_the_page_do_not(self):
        status, headers, _ = self.lab.http_get("api/v1/jobs", token="")
        self.assertEqual(status, 401)
        self.assertEqual(headers.get("WWW-Authenticate"), 'Bearer realm="mculab"')
        self.assertEqual(self.lab.http_get("api/v1/jobs", token=self.lab.agent_token)[0], 403)
        viewer = self.lab.add_user("web-vic", "viewer")
        self.assertEqual(self.lab.http_get("api/v1/jobs", token=viewer)[0], 200)
        self.assertEqual(self.lab.http_get("healthz", token="")[0], 200)


class TlsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.lab = lablib.Lab("tls-lab", [lablib.host_board()], tls=True)
        cls.lab.__enter__()  # the agent registered over TLS (it is "ready")

    @classmethod
    def tearDownClass(cls):
        cls.lab.close()

    def test_the_cli_talks_tls_with_the_ca_and_fails_clearly_without_it(self):
        self.assertIn("(TLS)", "".join(self.lab.server.lines))
        boards = json.loads(self.lab.cli("boards", "--json").stdout)
        self.assertEqual(boards[0]["name"], "host-0")
        wrong = os.path.join(self.lab.home, "wrong-ca.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                        "-subj", "/CN=localhost", "-keyout", wrong + ".key", "-out", wrong],
                       check=True, capture_output=True, timeout=120)
        r = self.lab.cli("boards", ca=wrong, check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("TLS handshake failed", r.stderr)
        self.assertIn(wrong, r.stderr)
        r = self.lab.cli("boards", ca="", check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("pass its CA certificate with --ca", r.stderr)

    def test_a_new_board_waits_for_an_admins_approval_on_a_tls_lab(self):
        board = lambda: self.lab.cli_json("boards")[0]  # noqa: E731
        self.assertEqual(board()["health"], "maintenance")
        self.assertTrue(board()["awaiting_approval"])
        self.assertIn("maintenance (to approve)", self.lab.cli("boards").stdout)
        fc = lablib.write_csv(self.lab.home, "fc.csv", FC_CSV)
        jid = self.lab.cli("submit", "--board", "host-0", "--op", "fully_connected_s8", "--cases",
                           fc, "--iterations", "1").stdout.strip()
        self.assertEqual(self.lab.cli_json("show", jid)["state"], "queued")
        meg = self.lab.add_user("meg-tls", "member")
        r = self.lab.cli("board", "host-0", "--approve", token=meg, check=False)
        self.assertEqual(r.returncode, 1)
        r = self.lab.cli("board", "host-0", "--approve")
        self.assertIn("approved", r.stdout)
        # Its health check passes, then the waiting job runs.
        self.assertEqual(self.lab.wait_job(jid, timeout=120)["state"], "succeeded")
        self.assertEqual(board()["health"], "good")
        self.assertFalse(board()["awaiting_approval"])


if __name__ == "__main__":
    unittest.main()
