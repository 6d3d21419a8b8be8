#!/usr/bin/env python3
"""`mculab-server --help` lists every key the server's config file accepts, and
`mculab-server admin --help` points to `mculab board` for a board's live state and lists
migrate-store.

The keys are read from server/service/config.cc (the `k != "..."` checks that refuse unknown keys),
so a key added there without a line in the help fails this test.
  check_server_help.py MCULAB_SERVER_BINARY SOURCE_DIR
"""
import os
import re
import subprocess
import sys


def main():
    server, source = sys.argv[1], sys.argv[2]
    with open(os.path.join(source, "server", "service", "config.cc")) as f:
        keys = sorted(set(re.findall(r'k != "([a-z_]+)"', f.read())))
    if len(keys) < 10:
        print(f"found only {len(keys)} config keys in config.cc: {keys}", file=sys.stderr)
        return 1
    text = subprocess.run([server, "--help"], capture_output=True, text=True, check=True).stdout
    missing = [k for k in keys if not re.search(rf"\b{re.escape(k)}\b", text)]
    if missing:
        print(f"mculab-server --help does not list: {', '.join(missing)}\n{text}", file=sys.stderr)
        return 1
    admin = subprocess.run([server, "admin", "--help"], capture_output=True, text=True,
                           check=True).stdout
    if "mculab board BOARD" not in admin or "--agent NAME" not in admin:
        print(f"mculab-server admin --help does not point to mculab board:\n{admin}",
              file=sys.stderr)
        return 1
    if "migrate-store" not in admin:
        print(f"mculab-server admin --help does not list migrate-store:\n{admin}", file=sys.stderr)
        return 1
    print(f"ok: {len(keys)} config keys listed, admin points to mculab board, lists migrate-store")
    return 0


if __name__ == "__main__":
    sys.exit(main())
