"""Starts a real mculab lab (server + agent) for integration and end-to-end tests.

Programs come from $MCULAB_BIN (build/bin). Each lab lives in its own temporary home with free
loopback ports; readiness is the programs' own "ready" log line, never a sleep.

Auth: before the server first starts, the lab makes an admin user ("admin", lab.admin_token) and
an agent token for its agent (lab.agent_token, given to the agent through token_file). lab.cli()
runs the CLI with the admin token unless given token=...; lab.add_user(name, role) makes more
users; lab.http_get() sends a token to the HTTP API. Lab(..., tls=True) makes a self-signed
certificate (openssl) and runs gRPC over TLS: the agent and the CLI get --ca lab.ca_path.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

BIN = os.environ.get("MCULAB_BIN", os.path.join(os.path.dirname(__file__), "..", "..", "build", "bin"))
AN547_ELF = os.environ.get("MCULAB_AN547_ELF", "")
QEMU_PLUGIN = os.environ.get("MCULAB_QEMU_PLUGIN", "")  # the QEMU counting plugin (qemu_plugin/)
OUTPUT = os.environ.get("MCULAB_TEST_OUTPUT", tempfile.gettempdir())


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Proc:
    """A child process whose combined output is collected and watched for a ready line."""

    def __init__(self, name, argv, log_path, env=None):
        self.name = name
        self.log_path = log_path
        self.lines = []
        self._cond = threading.Condition()
        self._log = open(log_path, "a", buffering=1)
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                  env=env, start_new_session=True)
        self._t = threading.Thread(target=self._pump, daemon=True)
        self._t.start()

    def _pump(self):
        for line in self.p.stdout:
            self._log.write(line)
            with self._cond:
                self.lines.append(line)
                self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    def wait_for(self, needle, timeout=60, start=0):
        """Blocks until a line containing `needle` appears (after line index `start`)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for i in range(start, len(self.lines)):
                    if needle in self.lines[i]:
                        return i
                if self.p.poll() is not None and not self._t.is_alive():
                    raise AssertionError(f"{self.name} exited ({self.p.returncode}) before '{needle}':\n"
                                         + "".join(self.lines[-30:]))
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{self.name}: no '{needle}' within {timeout}s:\n"
                                         + "".join(self.lines[-30:]))
                self._cond.wait(min(left, 0.5))

    def stop(self, sig=signal.SIGTERM, timeout=10):
        if self.p.poll() is None:
            try:
                os.killpg(self.p.pid, sig)
            except ProcessLookupError:
                pass
            try:
                self.p.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.p.pid, signal.SIGKILL)
                self.p.wait()
        self._t.join(5)
        self._log.close()


class Lab:
    """A server and one agent with the given boards (dicts of TOML keys)."""

    def __init__(self, name, boards, server_args=(), tls=False, server_prefix=()):
        """server_prefix: a command the server runs under (e.g. prlimit with its arguments)."""
        self.name = name
        self.home = tempfile.mkdtemp(prefix=f"mculab-{name}-")
        self.out_dir = os.path.join(OUTPUT, name)
        os.makedirs(self.out_dir, exist_ok=True)
        self.grpc_port = free_port()
        self.address = f"127.0.0.1:{self.grpc_port}"
        # Every lab serves HTTP on its own free port (the server's default, 8080, would collide).
        self.http_port = free_port()
        self.boards = boards
        self.server_args = list(server_args)
        self.server_prefix = list(server_prefix)
        self.server = None
        self.agent = None
        self.admin_token = None
        self.agent_token = None
        self.agent_tokens = {}  # agent name -> its agent token
        self.tls = tls
        self.ca_path = None
        self.agents = {}  # more agents (add_agent), by name

    def __enter__(self):
        self.start_server()
        self.start_agent()
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def agent_name(self):
        return f"{self.name}-agent"

    def admin(self, *args, check=True):
        """Runs `mculab-server admin ARGS --home HOME`; returns the CompletedProcess."""
        r = subprocess.run([os.path.join(BIN, "mculab-server"), "admin", *args, "--home", self.home],
                           capture_output=True, text=True, timeout=60)
        if check and r.returncode != 0:
            raise AssertionError(f"mculab-server admin {' '.join(args)} exited {r.returncode}:\n"
                                 f"{r.stdout}\n{r.stderr}")
        return r

    def add_user(self, name, role):
        """A new user with `role` (admin, member, viewer); returns their token."""
        return self.admin("user", "add", name, "--role", role).stdout.strip()

    def add_agent_token(self, host):
        return self.admin("agent", "add", host).stdout.strip()

    def _make_accounts(self):
        if self.admin_token is None:
            self.admin_token = self.add_user("admin", "admin")
            self.agent_token = self.add_agent_token(self.agent_name)

    def _make_tls(self):
        """A self-signed certificate for 127.0.0.1/localhost and a server config that uses it."""
        cert = os.path.join(self.home, "server.pem")
        key = os.path.join(self.home, "server.key")
        if not os.path.exists(cert):
            subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                            "-subj", "/CN=localhost", "-addext",
                            "subjectAltName=DNS:localhost,IP:127.0.0.1",
                            "-keyout", key, "-out", cert],
                           check=True, capture_output=True, timeout=120)
        config = os.path.join(self.home, "server.toml")
        with open(config, "w") as f:
            f.write(f'tls_cert = "{cert}"\ntls_key = "{key}"\n')
        self.ca_path = cert
        return ["--config", config]

    def start_server(self):
        self._make_accounts()
        tls = self._make_tls() if self.tls else []
        # free_port() only finds a port that was free: another test may take it before the server
        # binds it. Before anything knows the lab's address (its first start), pick new ones.
        for attempt in range(4):
            http = [] if "--http-listen" in self.server_args else [
                "--http-listen", f"127.0.0.1:{self.http_port}"]
            self.server = Proc("mculab-server", self.server_prefix +
                               [os.path.join(BIN, "mculab-server"), "--home", self.home,
                                "--grpc-listen", self.address] + http + tls + self.server_args,
                               os.path.join(self.out_dir, "server.log"))
            try:
                self.server.wait_for("mculab-server ready")
                self._server_started = True
                return
            except AssertionError as e:
                if (getattr(self, "_server_started", False) or attempt == 3
                        or "Address already in use" not in str(e)):
                    raise
                self.grpc_port = free_port()
                self.address = f"127.0.0.1:{self.grpc_port}"
                self.http_port = free_port()

    def agent_config(self, agent_name=None, boards=None, spool="spool", filename="agent.toml"):
        agent_name = agent_name or self.agent_name
        boards = self.boards if boards is None else boards
        if agent_name == self.agent_name:
            token = self.agent_token
        else:
            token = self.agent_tokens.get(agent_name) or self.add_agent_token(agent_name)
        self.agent_tokens[agent_name] = token
        token_file = os.path.join(self.home, f"{agent_name}.token")
        with open(token_file, "w") as f:
            f.write(token + "\n")
        os.chmod(token_file, 0o600)
        lines = ["[agent]", f'name = "{agent_name}"', f'server = "{self.address}"',
                 f'spool_dir = "{os.path.join(self.home, spool)}"', "heartbeat_ms = 1000",
                 f'token_file = "{token_file}"', "",
                 # bubblewrap where it works, else namespaces (a chroot such as the fresh-machine
                 # check): every runner still runs confined and unprivileged.
                 "[sandbox]", 'mode = "auto"', ""]
        for b in boards:
            lines.append("[[board]]")
            for k, v in b.items():
                if isinstance(v, str):
                    lines.append(f'{k} = "{v}"')
                elif isinstance(v, bool):
                    lines.append(f"{k} = {'true' if v else 'false'}")
                elif isinstance(v, dict):
                    lines.append(f"{k} = {{ " + ", ".join(f'{a} = "{b}"' for a, b in v.items()) + " }")
                else:
                    lines.append(f"{k} = {v}")
            lines.append("")
        path = os.path.join(self.home, filename)
        with open(path, "w") as f:
            f.write("\n".join(lines))
        return path

    def start_agent(self):
        cfg = self.agent_config()
        ca = ["--ca", self.ca_path] if self.tls else []
        self.agent = Proc("mculab-agent", [os.path.join(BIN, "mculab-agent"), "--config", cfg] + ca,
                          os.path.join(self.out_dir, "agent.log"))
        self.agent.wait_for("mculab-agent ready")

    # ---- more agents, kills and restarts (durability tests) ----

    def add_agent(self, agent_name, boards):
        """Starts another agent with its own boards and spool; returns its Proc once it is ready."""
        cfg = self.agent_config(agent_name, boards, spool=f"spool-{agent_name}",
                                filename=f"agent-{agent_name}.toml")
        ca = ["--ca", self.ca_path] if self.tls else []
        proc = Proc(agent_name, [os.path.join(BIN, "mculab-agent"), "--config", cfg] + ca,
                    os.path.join(self.out_dir, f"agent-{agent_name}.log"))
        self.agents[agent_name] = proc
        proc.wait_for("mculab-agent ready")
        return proc

    def kill_agent(self, sig=signal.SIGKILL):
        """Ends the main agent with `sig` (default: kill -9, nothing gets to clean up)."""
        self.agent.stop(sig)

    def restart_agent(self, sig=signal.SIGTERM):
        """Stops the main agent with `sig` and starts it again with the same config and spool."""
        self.agent.stop(sig)
        self.start_agent()

    def restart_server(self, sig=signal.SIGKILL):
        """Ends the server with `sig` and starts it again with the same home and ports."""
        self.server.stop(sig)
        self.start_server()

    def wait_job(self, job_id, states=("succeeded", "failed", "cancelled", "timed_out"), timeout=60):
        """Polls `mculab show --json` (bounded) until the job is in one of `states`; returns it."""
        deadline = time.monotonic() + timeout
        while True:
            job = self.cli_json("show", str(job_id))
            if job["state"] in states:
                return job
            if time.monotonic() > deadline:
                raise AssertionError(f"job {job_id} not in {states} within {timeout}s: {job['state']}"
                                     f" ({job.get('message', '')})")
            time.sleep(0.1)

    def close(self):
        for p in list(self.agents.values()) + [self.agent, self.server]:
            if p:
                p.stop()
        shutil.rmtree(self.home, ignore_errors=True)

    def cli(self, *args, check=True, timeout=300, token=None, ca=None):
        """Runs the mculab CLI against this lab; returns the CompletedProcess.

        token: None uses the admin's token, "" runs without one, anything else is sent as given.
        ca: the CA file for --ca; None uses the lab's own (when it runs TLS), "" gives none.
        """
        env = dict(os.environ, MCULAB_SERVER=self.address, HOME=self.home)
        env.pop("MCULAB_TOKEN", None)
        env.pop("XDG_CONFIG_HOME", None)
        token = self.admin_token if token is None else token
        if token:
            env["MCULAB_TOKEN"] = token
        ca = (self.ca_path if self.tls else "") if ca is None else ca
        pre = ["--ca", ca] if ca else []
        r = subprocess.run([os.path.join(BIN, "mculab")] + pre + list(args), capture_output=True,
                           text=True, env=env, timeout=timeout)
        if check and r.returncode != 0:
            raise AssertionError(f"mculab {' '.join(args)} exited {r.returncode}:\n{r.stdout}\n{r.stderr}")
        return r

    def cli_popen(self, *args, token=None):
        """Starts the mculab CLI against this lab without waiting (e.g. `reserve --hold`): a Proc
        whose output lines can be waited for; stop it with .stop(signal)."""
        env = dict(os.environ, MCULAB_SERVER=self.address, HOME=self.home)
        env.pop("MCULAB_TOKEN", None)
        env.pop("XDG_CONFIG_HOME", None)
        token = self.admin_token if token is None else token
        if token:
            env["MCULAB_TOKEN"] = token
        return Proc("mculab " + " ".join(args[:2]), [os.path.join(BIN, "mculab")] + list(args),
                    os.path.join(self.out_dir, "cli.log"), env=env)

    def cli_json(self, *args, **kw):
        r = self.cli(*args, "--json", **kw)
        return json.loads(r.stdout)

    def http_get(self, path, token=None):
        """GET http_url + path with the admin's token (token=None), none ("") or the one given;
        returns (status, headers, body bytes) for any status."""
        import urllib.error
        import urllib.request
        token = self.admin_token if token is None else token
        req = urllib.request.Request(self.http_url + path)
        if token:
            req.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(req, timeout=30) as res:
                return res.status, dict(res.headers), res.read()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read()

    def api_json(self, path, token=None):
        """The JSON document GET http_url + path serves (token as for http_get); an
        AssertionError naming the path, the status and the body unless the status is 200."""
        status, _, body = self.http_get(path, token=token)
        if status != 200:
            raise AssertionError(f"GET {path}: status {status}: {body[:2000]!r}")
        return json.loads(body)

    @property
    def http_url(self):
        """The web page's address (its API is under api/v1/)."""
        return f"http://127.0.0.1:{self.http_port}/"

    @property
    def db_path(self):
        return os.path.join(self.home, "mculab.db")


def wait_until(action, done, timeout=30):
    """Repeats action() until done(result) holds (for effects with a bounded delay, such as a
    revoked token leaving the server's 2 s cache); returns the last result. Polls, never a fixed
    sleep: it returns as soon as the effect is there."""
    deadline = time.monotonic() + timeout
    while True:
        r = action()
        if done(r) or time.monotonic() > deadline:
            return r
        time.sleep(0.1)


def host_board(name="host-0"):
    return {"name": name, "kind": "host", "backend": "host",
            "runner": os.path.join(BIN, "mculab-runner-host"), "timeout_s": 120}


def custom_host_board(name="host-custom", **extra):
    """A host board that runs jobs' own executables (mculab submit --firmware)."""
    b = host_board(name)
    b["allow_custom_runners"] = True
    b.update(extra)
    return b


EXAMPLE_RUNNER_HOST = os.path.join(BIN, "mculab-example-runner-host")
EXAMPLE_RUNNER_AN547_ELF = os.environ.get("MCULAB_EXAMPLE_RUNNER_AN547_ELF", "")
# The sandbox tests' hostile runner (tests/hostile_runner/main.c).
HOSTILE_RUNNER_HOST = os.path.join(BIN, "mculab-hostile-runner-host")
HOSTILE_RUNNER_AN547_ELF = (os.path.join(os.path.dirname(AN547_ELF), "mculab-hostile-runner-an547.elf")
                            if AN547_ELF else "")


def example_model_blob(conv=(1, 4, 8, 8, 4, 3, 3, 1, 1, 1, 1), fc_out=10):
    """The example runner's "model" (examples/custom_runner/main.c), made by the writer the
    example ships (examples/custom_runner/write_model.py), so the tests use what users use."""
    import importlib.util
    path = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "custom_runner",
                        "write_model.py")
    spec = importlib.util.spec_from_file_location("write_model", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.model_blob(conv, fc_out)


def qemu_board(name="an547-0", allow_custom_runners=False):
    board = {"name": name, "kind": "corstone300-qemu", "backend": "qemu", "firmware": AN547_ELF,
             "icount_shift": 5, "timeout_s": 300, "tags": {"cpu": "cortex-m55"}}
    if allow_custom_runners:
        board["allow_custom_runners"] = True
    if QEMU_PLUGIN:
        board["qemu_plugin"] = QEMU_PLUGIN
    return board


AN500_ELF = os.environ.get("MCULAB_AN500_ELF", "")


def an500_board(name="an500-0"):
    """The emulated Cortex-M7: the an500 runner port on QEMU mps2-an500."""
    board = {"name": name, "kind": "cm7-qemu", "backend": "qemu", "machine": "mps2-an500",
             "firmware": AN500_ELF, "icount_shift": 5, "timeout_s": 300,
             "tags": {"cpu": "cortex-m7"}}
    if QEMU_PLUGIN:
        board["qemu_plugin"] = QEMU_PLUGIN
    return board


def fake_board(name="fake-0", sample_delay_ms=0, kind="fake", fault="none"):
    """The in-agent simulated runner (agent/boards/fake_board.h); `sample_delay_ms` makes it slow
    enough to kill mid-run, `fault` makes it misbehave."""
    return {"name": name, "kind": kind, "backend": "fake", "sample_delay_ms": sample_delay_ms,
            "timeout_s": 120, "fault": fault}


def write_csv(directory, name, text):
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        f.write(text)
    return path
