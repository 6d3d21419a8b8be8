#!/usr/bin/env python3
"""Checks deploy/udev/*.rules: every rule line is KEY<op>"value" pairs of keys udev knows, with
match operators on match keys and assignments on assignment keys, every GOTO has its LABEL, and
the probes the lab supports are all there. Then runs `udevadm verify` when the installed udev has it
(systemd 254 or later); otherwise says so and relies on the checks above."""
import re
import shutil
import subprocess
import sys

MATCH_KEYS = {"ACTION", "DEVPATH", "KERNEL", "KERNELS", "NAME", "SYMLINK", "SUBSYSTEM",
              "SUBSYSTEMS", "DRIVER", "DRIVERS", "ATTR", "ATTRS", "SYSCTL", "TAG", "TAGS", "ENV",
              "CONST", "TEST", "PROGRAM", "RESULT"}
ASSIGN_KEYS = {"NAME", "SYMLINK", "OWNER", "GROUP", "MODE", "SECLABEL", "ATTR", "SYSCTL", "ENV",
               "TAG", "RUN", "LABEL", "GOTO", "IMPORT", "OPTIONS"}
TOKEN = re.compile(r'\s*([A-Z_]+)(\{[^}]*\})?\s*(==|!=|\+=|-=|:=|=)\s*"((?:[^"\\]|\\.)*)"\s*(,|$)')
NEEDED = ["0483", "3748", "374b", "374e", "0d28", "1fc9", "0143", "1366", "CMSIS-DAP",
          'GROUP="plugdev"', 'GROUP="dialout"', "SYMLINK+=\"mculab/"]


def check(path):
    errors, gotos, labels = [], set(), set()
    text = open(path, encoding="utf-8").read()
    for n, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        pos = 0
        while pos < len(s):
            m = TOKEN.match(s, pos)
            if not m:
                errors.append(f"{path}:{n}: cannot parse from: {s[pos:]}")
                break
            key, op, value = m.group(1), m.group(3), m.group(4)
            if op in ("==", "!="):
                if key not in MATCH_KEYS:
                    errors.append(f"{path}:{n}: {key} cannot be matched ({op})")
            elif key not in ASSIGN_KEYS:
                errors.append(f"{path}:{n}: {key} cannot be assigned ({op})")
            if key == "GOTO":
                gotos.add(value)
            if key == "LABEL":
                labels.add(value)
            if key == "MODE" and not re.fullmatch(r"0[0-7]{3}", value):
                errors.append(f"{path}:{n}: MODE {value} is not an octal mode")
            pos = m.end()
    for g in sorted(gotos - labels):
        errors.append(f"{path}: GOTO {g} has no LABEL")
    for needed in NEEDED:
        if needed not in text:
            errors.append(f"{path}: nothing mentions {needed}")
    return errors


def main():
    paths = sys.argv[1:]
    errors = [e for p in paths for e in check(p)]
    udevadm = shutil.which("udevadm")
    verify = udevadm and subprocess.run([udevadm, "verify", "--help"], capture_output=True).returncode == 0
    if verify:
        r = subprocess.run([udevadm, "verify", *paths], capture_output=True, text=True)
        print(r.stdout + r.stderr, end="")
        if r.returncode != 0:
            errors.append("udevadm verify failed")
    else:
        print("udevadm verify is not available here (it needs udev from systemd 254 or later); "
              "checked the rules' syntax, keys and labels only")
    for e in errors:
        print(e)
    if not errors:
        print(f"{len(paths)} rules file(s) checked")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
