#!/usr/bin/env python3
"""`mculab-server admin migrate-store`, the command around db/store_copy.h (whose own tests copy
every table to PostgreSQL): a lab made by admin commands is copied to another SQLite file, the
counts are printed per table, a second run copies nothing, and a bad URL or an unreachable
database fails with a message that never shows the password.
  check_migrate_store.py MCULAB_SERVER_BINARY
"""
import os
import shutil
import subprocess
import sys
import tempfile


def admin(server, home, *args):
    return subprocess.run([server, "admin", "--home", home, *args], capture_output=True, text=True,
                          timeout=120)


def counts(stdout):
    """{table: (source, destination, copied now)} from the command's table."""
    rows = [line.split() for line in stdout.splitlines()[1:] if line.strip()]
    return {r[0]: (int(r[1]), int(r[2]), int(r[3])) for r in rows}


def fail(what, r):
    print(f"{what}\nexit {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}", file=sys.stderr)
    return 1


def main():
    server = sys.argv[1]
    home = tempfile.mkdtemp(prefix="mculab-migrate-store-")
    try:
        for args in (["user", "add", "ana", "--role", "admin"], ["agent", "add", "rack-1"]):
            r = admin(server, home, *args)
            if r.returncode != 0:
                return fail(f"admin {' '.join(args)} failed", r)

        r = admin(server, home, "migrate-store", "--to", "sqlite:copy.db")
        if r.returncode != 0:
            return fail("migrate-store to a new SQLite file failed", r)
        table = counts(r.stdout)
        if table.get("users") != (1, 1, 1) or table.get("tokens") != (2, 2, 2):
            return fail("migrate-store did not print users 1 1 1 and tokens 2 2 2", r)
        if any(s != d for s, d, _ in table.values()) or len(table) < 15:
            return fail("migrate-store's counts differ or miss tables", r)

        r = admin(server, home, "migrate-store", "--from", "sqlite:mculab.db", "--to",
                  "sqlite:copy.db")
        if r.returncode != 0 or any(c != 0 for _, _, c in counts(r.stdout).values()):
            return fail("migrate-store run again on a complete copy copied rows or failed", r)

        listing = admin(server, home, "--store", "sqlite:copy.db", "user", "list")
        if listing.returncode != 0 or "ana" not in listing.stdout or "rack-1" not in listing.stdout:
            return fail("the copy does not list the accounts", listing)

        r = admin(server, home, "migrate-store", "--to", "mysql://db/lab")
        if r.returncode == 0 or "unknown store" not in r.stderr:
            return fail("migrate-store to an unknown kind of store did not fail clearly", r)

        nowhere = os.path.join(home, "no-server")
        r = admin(server, home, "migrate-store", "--to",
                  f"postgresql://lab:s3cr3t-pw@/mculab?host={nowhere}&port=1")
        if r.returncode == 0 or "cannot connect" not in r.stderr or "s3cr3t-pw" in r.stderr + r.stdout:
            return fail("migrate-store to an unreachable database: no clear error, or the password", r)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    print("ok: migrate-store copies, prints the counts, reruns, and fails clearly")
    return 0


if __name__ == "__main__":
    sys.exit(main())
