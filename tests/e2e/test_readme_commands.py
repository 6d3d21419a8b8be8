"""The README's usage sections run as written against the quick start's lab.

The lab is the one deploy/quickstart.sh starts (the same three boards: an547-0 with
allow_custom_runners and the QEMU counting plugin, an500-0, host-0) with its sample job after the
boards' health checks.
Every ```sh block of "Using the lab" (and its subsections) and of "Users, roles and tokens" is
extracted from README.md and each command is run in order, from a scratch folder that sees the
repository's examples/ and build/ (so relative paths resolve and written files stay out of the
tree). A command fails the test when it exits non-zero or prints an error ("error:", "warning:" on
a command the README shows as clean is tolerated only for CSV column warnings).

Substitutions, the only liberties taken with the text (the README says "say 4", "say job 42"):
- in `mculab show|export|cancel N`, N is the id of the job the block's latest `mculab submit`
  made (unchanged when the block submitted nothing: job 1, a board's health check, exists);
- in `mculab-server admin token revoke ID`, ID is the id the latest `admin token add` printed.
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import lablib  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
README = os.path.join(ROOT, "README.md")
# What the scratch folder's build/ is: the build tree the tests run from.
BUILD = os.environ.get("MCULAB_BUILD_DIR", os.path.join(ROOT, "build"))
SECTIONS = ("## Using the lab", "### Users, roles and tokens")
COMMANDS = ("mculab", "mculab-server", "examples/", "build/")
# What a command may print on stderr without failing: progress lines and CSV column warnings.
ERROR = re.compile(r"(^|\s)(error|fatal|terminate called|Segmentation fault)\b", re.IGNORECASE)


def readme_blocks(text):
    """The ```sh blocks of the usage sections: (heading, [command, ...]) in order."""
    blocks = []
    h2 = h3 = heading = None
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            h2, h3, heading = line.strip(), None, line.strip()
        elif line.startswith("### "):
            h3 = heading = line.strip()
        in_scope = h2 == SECTIONS[0] or h3 == SECTIONS[1]
        if line.strip() == "```sh" and in_scope:
            body = []
            i += 1
            while lines[i].strip() != "```":
                body.append(lines[i])
                i += 1
            blocks.append((heading, commands_of(body)))
        i += 1
    return blocks


def strip_comment(line):
    """The line without its trailing `# ...` comment (outside quotes)."""
    quote = None
    for k, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "#" and (k == 0 or line[k - 1].isspace()):
            return line[:k].rstrip()
    return line.rstrip()


def commands_of(body):
    """Joins continuation lines and drops comments; keeps the lines that are commands."""
    out, current = [], ""
    for raw in body:
        line = strip_comment(raw)
        if line.endswith("\\"):
            current += line[:-1].rstrip() + " "
            continue
        current += line.strip()
        if current.strip():
            out.append(current.strip())
        current = ""
    return out


@unittest.skipUnless(lablib.AN547_ELF and os.path.exists(lablib.AN547_ELF)
                     and lablib.AN500_ELF and os.path.exists(lablib.AN500_ELF),
                     "the QEMU runner firmware was not built (arm-none-eabi-gcc missing)")
class ReadmeCommandsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # deploy/quickstart.sh's agent.toml: the same boards and settings.
        an547 = lablib.qemu_board("an547-0", allow_custom_runners=True)
        an500 = lablib.an500_board("an500-0")
        host = lablib.host_board("host-0")
        host["timeout_s"] = 300
        cls.lab = lablib.Lab("readme", [an547, an500, host])
        cls.lab.__enter__()
        cls.work = tempfile.mkdtemp(prefix="mculab-readme-")
        os.symlink(os.path.join(ROOT, "examples"), os.path.join(cls.work, "examples"))
        os.symlink(BUILD, os.path.join(cls.work, "build"))
        cls.log = open(os.path.join(cls.lab.out_dir, "commands.log"), "w")
        # The quick start's sample job (after the new boards' health checks, jobs 1 to 3).
        sample = cls.lab.cli("submit", "--kind", "corstone300-qemu", "--op", "conv2d_s8", "--cases",
                             os.path.join(ROOT, "examples", "conv2d_sweep.csv"), "--iterations",
                             "20", "--warmup", "2", "--label", "quickstart sample", "--wait",
                             timeout=600)
        assert "succeeded" in sample.stderr, sample.stderr

    @classmethod
    def tearDownClass(cls):
        cls.log.close()
        cls.lab.close()

    def env(self):
        env = dict(os.environ, MCULAB_SERVER=self.lab.address, MCULAB_TOKEN=self.lab.admin_token,
                   MCULAB_HOME=self.lab.home, HOME=self.lab.home)
        env["PATH"] = os.path.abspath(lablib.BIN) + os.pathsep + env.get("PATH", "")
        env.pop("XDG_CONFIG_HOME", None)
        return env

    def run_block(self, heading, commands):
        job = None
        token_id = None
        for command in commands:
            words = shlex.split(command)
            if words[0] == "export":
                continue  # the lab's address and PATH are set already
            if words[0] == "mculab" and len(words) > 2 and words[1] in ("show", "export", "cancel") \
                    and words[2].isdigit() and job is not None:
                words[2] = str(job)
            if words[:4] == ["mculab-server", "admin", "token", "revoke"] and token_id:
                words[4] = token_id
            line = shlex.join(words)
            r = subprocess.run(["bash", "-c", line], cwd=self.work, env=self.env(),
                               capture_output=True, text=True, timeout=900)
            self.log.write(f"$ {line}\n{r.stdout}{r.stderr}(exit {r.returncode})\n\n")
            self.log.flush()
            where = f"README {heading}: `{line}`"
            self.assertEqual(r.returncode, 0, f"{where} exited {r.returncode}:\n{r.stdout}\n{r.stderr}")
            errors = [l for l in (r.stdout + r.stderr).splitlines()
                      if ERROR.search(l) and "checksum" not in l]
            self.assertEqual(errors, [], f"{where} printed an error")
            if words[:2] == ["mculab", "submit"]:
                m = re.search(r"^job (\d+) ", r.stderr, re.MULTILINE)
                job = int(m.group(1)) if m else int(r.stdout.strip().splitlines()[0])
            if words[:4] == ["mculab-server", "admin", "token", "add"]:
                token_id = re.search(r"new token \((\S+)\)", r.stderr).group(1)

    def test_every_usage_command_runs(self):
        with open(README) as f:
            blocks = readme_blocks(f.read())
        headings = [h for h, _ in blocks]
        # The sections the README documents usage in, so a renamed heading cannot skip them.
        for expected in ("## Using the lab", "### Bring your own runtime",
                         "### Events, passes, per-op profiles and memory",
                         "### Users, roles and tokens"):
            self.assertIn(expected, headings)
        ran = 0
        for heading, commands in blocks:
            with self.subTest(section=heading):
                self.run_block(heading, commands)
                ran += len(commands)
        self.assertGreaterEqual(ran, 20)

    def test_the_events_the_readme_shows_are_counted(self):
        r = self.lab.cli("events", "--kind", "corstone300-qemu")
        self.assertIn("instructions", r.stdout)
        self.assertNotIn("counts nothing", r.stdout + r.stderr)


class ReadmeParsingTest(unittest.TestCase):
    """The extraction itself, without a lab."""

    def test_blocks_commands_and_comments(self):
        text = ("# t\n## Quick start\n```sh\n./deploy/quickstart.sh\n```\n## Using the lab\n"
                "```sh\nmculab submit --label \"a # b\" \\\n   --wait   # note\nmculab jobs\n```\n"
                "### Sub\n```\nid,N\n```\n```sh\nmculab show 1\n```\n## Team set-up\n"
                "### Users, roles and tokens\n```sh\nmculab-server admin user list  # x\n```\n"
                "### TLS\n```sh\nopenssl req\n```\n")
        self.assertEqual(readme_blocks(text), [
            ("## Using the lab", ['mculab submit --label "a # b" --wait', "mculab jobs"]),
            ("### Sub", ["mculab show 1"]),
            ("### Users, roles and tokens", ["mculab-server admin user list"]),
        ])

    def test_the_readme_has_usage_blocks(self):
        with open(README) as f:
            blocks = readme_blocks(f.read())
        self.assertTrue(any(c.startswith("mculab submit") for _, cs in blocks for c in cs))
        for _, cs in blocks:
            for c in cs:
                self.assertTrue(c.startswith(COMMANDS + ("export",)), c)


if __name__ == "__main__":
    unittest.main()
