"""Integration: floods of connections that never authenticate, against the real server, from
loopback addresses only (127.0.0.2-9 stand for the attacker's hosts, 127.0.0.1 for the lab's
users), bounded in count and time:
- gRPC: more connections than the server has descriptors (it runs under prlimit), then normal
  authenticated calls, during the flood and after it;
- HTTP: 8 addresses x 64 connections that send nothing or a trickled header (every slot), then
  /healthz and an authenticated /api/v1/boards, and the flood's connections closed within the
  header timeout."""
import http.client
import os
import selectors
import socket
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import lablib  # noqa: E402

ATTACKERS = [f"127.0.0.{i}" for i in range(2, 10)]


def open_flood(port, per_address, payload=b"", budget_s=20):
    """Connects per_address sockets from each attacker address to 127.0.0.1:port and sends
    `payload` on each, for at most budget_s seconds; returns the sockets that connected (refusals
    and resets are skipped)."""
    socks = []
    deadline = time.monotonic() + budget_s
    for source in ATTACKERS:
        for _ in range(per_address):
            if time.monotonic() > deadline:
                return socks
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.settimeout(2)
            try:
                s.bind((source, 0))
                s.connect(("127.0.0.1", port))
                if payload:
                    s.sendall(payload)
                socks.append(s)
            except OSError:
                s.close()
    return socks


def closed_by_server(socks, timeout):
    """How many of `socks` the server closes (EOF or reset) within `timeout` seconds."""
    sel = selectors.DefaultSelector()  # epoll: the flood's descriptors pass select()'s 1024
    for s in socks:
        sel.register(s, selectors.EVENT_READ)
    closed = 0
    deadline = time.monotonic() + timeout
    while closed < len(socks) and time.monotonic() < deadline:
        for key, _ in sel.select(0.2):
            try:
                data = key.fileobj.recv(65536)
            except OSError:
                data = b""
            if not data:
                closed += 1
                sel.unregister(key.fileobj)
    sel.close()
    return closed


def close_all(socks):
    for s in socks:
        s.close()


def write_config(lab, text):
    path = os.path.join(lab.home, "limits.toml")
    with open(path, "w") as f:
        f.write(text)
    return ["--config", path]


class GrpcFloodTest(unittest.TestCase):
    DESCRIPTORS = 400  # the server's RLIMIT_NOFILE, soft and hard
    PER_ADDRESS = 150  # x 8 addresses: three times the server's descriptors

    @classmethod
    def setUpClass(cls):
        cls.lab = lablib.Lab("grpc-flood", [lablib.fake_board()],
                             server_prefix=["prlimit", f"--nofile={cls.DESCRIPTORS}", "--"])
        cls.lab.server_args = write_config(cls.lab, "grpc_auth_timeout_ms = 3000\n")
        cls.lab.__enter__()

    @classmethod
    def tearDownClass(cls):
        cls.lab.close()

    def boards_answer(self):
        """`mculab boards` with the admin's token succeeds, at once or after the server has
        recovered (a bounded wait)."""
        r = lablib.wait_until(lambda: self.lab.cli("boards", "--json", check=False, timeout=30),
                              lambda r: r.returncode == 0, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("fake-0", r.stdout)

    def test_a_flood_beyond_the_descriptor_limit_leaves_the_port_working(self):
        flood = open_flood(self.lab.grpc_port, self.PER_ADDRESS)
        try:
            self.boards_answer()  # while the flood holds its sockets
            # Connections that never authenticate are ended, whatever their address.
            still_open = len(flood) - closed_by_server(flood, timeout=15)
            self.assertEqual(still_open, 0)
        finally:
            close_all(flood)
        self.boards_answer()
        # The agent's link survived or came back: its board is still there for jobs.
        boards = self.lab.cli_json("boards")
        self.assertEqual(boards[0]["name"], "fake-0")


class HttpSlowlorisTest(unittest.TestCase):
    HEADER_TIMEOUT_S = 3

    @classmethod
    def setUpClass(cls):
        cls.lab = lablib.Lab("http-slowloris", [lablib.fake_board()])
        cls.lab.server_args = write_config(
            cls.lab, f"http_header_timeout_ms = {cls.HEADER_TIMEOUT_S * 1000}\n")
        cls.lab.__enter__()

    @classmethod
    def tearDownClass(cls):
        cls.lab.close()

    def get(self, path, token):
        """(status, headers) of GET path from 127.0.0.1, or the error's text."""
        conn = http.client.HTTPConnection("127.0.0.1", self.lab.http_port, timeout=10)
        try:
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            conn.request("GET", path, headers=headers)
            res = conn.getresponse()
            res.read()
            return res.status, dict(res.getheaders())
        except OSError as e:
            return f"no answer: {e!r}", {}
        finally:
            conn.close()

    def test_idle_and_trickling_connections_lock_out_neither_healthz_nor_users(self):
        # Half send nothing, half the start of a header that never ends: 8 x 64 fills all 512.
        page_status = self.get("/", "")[0]
        flood = open_flood(self.lab.http_port, 32)
        flood += open_flood(self.lab.http_port, 32, b"GET / HTTP/1.1\r\nHost: x\r\n")
        try:
            started = time.monotonic()
            self.assertEqual(self.get("/api/v1/boards", self.lab.admin_token)[0], 200)
            self.assertEqual(self.get("/healthz", "")[0], 200)
            # Without a token, a slot kept for users is not given: 503 and when to come back.
            if time.monotonic() - started < self.HEADER_TIMEOUT_S - 1:
                status, headers = self.get("/", "")
                self.assertEqual(status, 503)
                self.assertEqual(headers.get("Retry-After"), "5")
            # The flood's connections end within the header timeout, whatever their address.
            still_open = len(flood) - closed_by_server(flood, timeout=self.HEADER_TIMEOUT_S + 5)
            self.assertEqual(still_open, 0)
        finally:
            close_all(flood)
        self.assertEqual(self.get("/", "")[0], page_status)


if __name__ == "__main__":
    unittest.main()
