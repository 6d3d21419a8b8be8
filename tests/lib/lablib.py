"""Starts a real mculab lab (server + agent) for integration and end-to-end tests.

Programs come from $MCULAB_BIN (build/bin). Each lab lives in its own temporary home with free
loopback ports; readiness is the programs' own "ready" log line, never a sleep.
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

    def __init__(self, name, boards, server_args=()):
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
        self.server = None
        self.agent = None
        self.agents = {}  # more agents (add_agent), by name

    def __enter__(self):
        self.start_server()
        self.start_agent()
        return self

    def __exit__(self, *exc):
        self.close()

    def start_server(self):
        http = [] if "--http-listen" in self.server_args else [
            "--http-listen", f"127.0.0.1:{self.http_port}"]
        self.server = Proc("mculab-server",
                           [os.path.join(BIN, "mculab-server"), "--home", self.home,
                            "--grpc-listen", self.address] + http + self.server_args,
                           os.path.join(self.out_dir, "server.log"))
        self.server.wait_for("mculab-server ready")

    def agent_config(self, agent_name=None, boards=None, spool="spool", filename="agent.toml"):
        agent_name = agent_name or f"{self.name}-agent"
        boards = self.boards if boards is None else boards
        lines = ["[agent]", f'name = "{agent_name}"', f'server = "{self.address}"',
                 f'spool_dir = "{os.path.join(self.home, spool)}"', "heartbeat_ms = 1000", ""]
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
        self.agent = Proc("mculab-agent", [os.path.join(BIN, "mculab-agent"), "--config", cfg],
                          os.path.join(self.out_dir, "agent.log"))
        self.agent.wait_for("mculab-agent ready")

    # ---- more agents, kills and restarts (durability tests) ----

    def add_agent(self, agent_name, boards):
        """Starts another agent with its own boards and spool; returns its Proc once it is ready."""
        cfg = self.agent_config(agent_name, boards, spool=f"spool-{agent_name}",
                                filename=f"agent-{agent_name}.toml")
        proc = Proc(agent_name, [os.path.join(BIN, "mculab-agent"), "--config", cfg],
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

    def cli(self, *args, check=True, timeout=300):
        """Runs the mculab CLI against this lab; returns the CompletedProcess."""
        env = dict(os.environ, MCULAB_SERVER=self.address, HOME=self.home)
        env.pop("MCULAB_TOKEN", None)
        r = subprocess.run([os.path.join(BIN, "mculab")] + list(args), capture_output=True, text=True,
                           env=env, timeout=timeout)
        if check and r.returncode != 0:
            raise AssertionError(f"mculab {' '.join(args)} exited {r.returncode}:\n{r.stdout}\n{r.stderr}")
        return r

    def cli_popen(self, *args):
        """Starts the mculab CLI against this lab without waiting (e.g. `reserve --hold`): a Proc
        whose output lines can be waited for; stop it with .stop(signal)."""
        env = dict(os.environ, MCULAB_SERVER=self.address, HOME=self.home)
        env.pop("MCULAB_TOKEN", None)
        return Proc("mculab " + " ".join(args[:2]), [os.path.join(BIN, "mculab")] + list(args),
                    os.path.join(self.out_dir, "cli.log"), env=env)

    def cli_json(self, *args, **kw):
        r = self.cli(*args, "--json", **kw)
        return json.loads(r.stdout)

    @property
    def http_url(self):
        """The web page's address (its API is under api/v1/)."""
        return f"http://127.0.0.1:{self.http_port}/"

    @property
    def db_path(self):
        return os.path.join(self.home, "mculab.db")


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


def example_model_blob(conv=(1, 4, 8, 8, 4, 3, 3, 1, 1, 1, 1), fc_out=10):
    """The example runner's "model" (examples/custom_runner/main.c): MCXM, version 1, conv2d's 11
    parameters, the fully connected layer's output features; 56 bytes, little-endian."""
    import struct
    return struct.pack("<II11ii", 0x4D58434D, 1, *conv, fc_out)


def qemu_board(name="an547-0"):
    return {"name": name, "kind": "corstone300-qemu", "backend": "qemu", "firmware": AN547_ELF,
            "icount_shift": 5, "timeout_s": 300, "tags": {"cpu": "cortex-m55"}}


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
