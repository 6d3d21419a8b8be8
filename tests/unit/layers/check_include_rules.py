#!/usr/bin/env python3
"""Keeps the arrows between the tree's parts pointing the right way (DESIGN.md section 2): every
#include "..." in the C and C++ sources is checked against the rules below, and each one broken
is printed with its file, line and the rule's reason. Only the composition roots (the programs'
main.cc, the server's admin/) may know every part.

  check_include_rules.py SOURCE_DIR          exit 1 when a rule is broken
  check_include_rules.py --self-test         checks the checker on a planted tree
"""
import os
import re
import sys
import tempfile

# (folder whose files are checked, included prefixes they must not include, why)
RULES = [
    ("common/", ("server/", "agent/", "cli/", "db/"),
     "common/ is shared by every program and knows none of them"),
    ("server/domain/", ("server/service/", "server/rpc/", "server/http/", "db/", "proto/",
                        "grpcpp/"),
     "the domain is pure: no store, no wire"),
    ("server/service/", ("db/", "server/rpc/", "server/http/", "server/admin/", "proto/",
                         "grpcpp/", "sqlite3.h", "libpq-fe.h", "lab.pb.h", "agent.pb.h"),
     "the service owns the store interface and knows neither SQLite, PostgreSQL nor the wire"),
    ("server/", ("sqlite3.h", "libpq-fe.h"),
     "only db/ speaks to a database: the server opens its store through db/lab_store.h"),
    ("agent/", ("sqlite3.h", "libpq-fe.h", "db/"), "the agent has no database"),
    ("server/wire/", ("server/rpc/", "server/http/", "grpcpp/", "db/"),
     "the wire's conversions and documents serve both the gRPC and the HTTP layer, below both"),
    ("server/http/", ("server/rpc/", "grpcpp/", "db/"),
     "the HTTP layer renders through wire/ and never knows the gRPC services or the store"),
    ("db/", ("server/rpc/", "server/http/", "proto/", "grpcpp/"),
     "the store implementation knows the service's interface only"),
    ("agent/io/", ("agent/boards/", "agent/run/", "agent/link/", "agent/runner/",
                   "agent/config.h"),
     "the agent's I/O is below everything else in the agent"),
    ("agent/boards/", ("agent/run/", "agent/link/", "agent/config.h"),
     "boards know their own configuration (board_config.h), not the agent's"),
    ("agent/boards/", ("proto/", "agent.pb.h", "lab.pb.h", "agent.grpc.pb.h", "lab.grpc.pb.h",
                       "grpcpp/"),
     "boards know nothing of the wire"),
    ("agent/run/", ("agent/link/", "proto/", "agent.pb.h", "lab.pb.h", "agent.grpc.pb.h",
                    "lab.grpc.pb.h", "grpcpp/"),
     "a run speaks plain types (agent/run/run_types.h); the link translates at its edge and "
     "depends on the run, never the reverse"),
    ("cli/", ("server/", "agent/", "db/"),
     "the CLI speaks to the server over the wire only"),
]

# (files, by a regular expression on their path, includes they must not have, why): arrows between
# files of one folder.
FILE_RULES = [
    (r"^server/service/(lab_state|job_desk|scheduling|board_desk|board_upkeep|agent_desk|run_ends|"
     r"upload_desk|run_measures)\.(h|cc)$",
     ("server/service/lab.h", "server/service/queries.h", "server/service/job_results.h"),
     "the Lab's parts work over LabState; the Lab owns them and the read side sits above it"),
]

# (CMake file, target, libraries it must not link, why): the same arrows at link level.
LINK_RULES = [
    ("server/CMakeLists.txt", "mculab_server_service", ("mculab_db", "mculab_proto_messages",
                                                        "mculab_server_rpc", "mculab_server_http"),
     "the service is linked with a store by the composition roots, never by itself"),
    ("server/CMakeLists.txt", "mculab_server_service", ("SQLite::SQLite3", "PkgConfig::LIBPQ"),
     "only mculab_db links a database's client library"),
    ("server/CMakeLists.txt", "mculab_server_domain", ("mculab_db", "mculab_server_store",
                                                       "mculab_proto_messages"),
     "the domain is pure"),
    ("agent/CMakeLists.txt", "mculab_agent_run", ("mculab_proto_messages", "mculab_proto_grpc",
                                                  "mculab_agent_link"),
     "a run knows no wire and no link: the link links the run"),
]

INCLUDE = re.compile(r'^\s*#\s*include\s+[<"]([^>"]+)[>"]')


def violations(root):
    out = []
    for folder, forbidden, why in RULES:
        base = os.path.join(root, folder)
        for d, _, files in os.walk(base):
            for f in sorted(files):
                if not f.endswith((".c", ".cc", ".h")):
                    continue
                path = os.path.join(d, f)
                with open(path, encoding="utf-8", errors="replace") as src:
                    for n, line in enumerate(src, 1):
                        m = INCLUDE.match(line)
                        if m and m.group(1).startswith(forbidden):
                            rel = os.path.relpath(path, root)
                            out.append(f"{rel}:{n}: includes {m.group(1)}: {why}")
    for pattern, forbidden, why in FILE_RULES:
        for d, _, files in os.walk(os.path.join(root, "server")):
            for f in sorted(files):
                path = os.path.join(d, f)
                rel = os.path.relpath(path, root)
                if not re.search(pattern, rel):
                    continue
                with open(path, encoding="utf-8", errors="replace") as src:
                    for n, line in enumerate(src, 1):
                        m = INCLUDE.match(line)
                        if m and m.group(1) in forbidden:
                            out.append(f"{rel}:{n}: includes {m.group(1)}: {why}")
    for cmake, target, forbidden, why in LINK_RULES:
        path = os.path.join(root, cmake)
        if not os.path.exists(path):
            continue
        with open(path) as f:
            text = f.read()
        for m in re.finditer(r"target_link_libraries\(\s*" + re.escape(target) + r"\s([^)]*)\)",
                             text):
            for lib in forbidden:
                if re.search(r"(^|\s)" + re.escape(lib) + r"(\s|$)", m.group(1)):
                    out.append(f"{cmake}: {target} links {lib}: {why}")
    return out


def self_test():
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "server", "service"))
        os.makedirs(os.path.join(root, "agent", "boards"))
        with open(os.path.join(root, "server", "service", "a.cc"), "w") as f:
            f.write('#include "server/service/a.h"\n#include "db/sqlite_store.h"\n')
        with open(os.path.join(root, "server", "service", "job_desk.cc"), "w") as f:
            f.write('#include "server/service/job_desk.h"\n#include "server/service/lab.h"\n')
        with open(os.path.join(root, "agent", "boards", "b.h"), "w") as f:
            f.write('#pragma once\n#include "agent/config.h"\n')
        os.makedirs(os.path.join(root, "agent", "run"))
        with open(os.path.join(root, "agent", "run", "r.cc"), "w") as f:
            f.write('#include "agent/run/r.h"\n#include "agent.pb.h"\n'
                    '#include "agent/link/spool.h"\n')
        with open(os.path.join(root, "agent", "CMakeLists.txt"), "w") as f:
            f.write("target_link_libraries(mculab_agent_run PUBLIC mculab_agent_runner\n"
                    "                      mculab_proto_messages spdlog::spdlog)\n")
        with open(os.path.join(root, "server", "CMakeLists.txt"), "w") as f:
            f.write("target_link_libraries(mculab_server_service PUBLIC mculab_common\n"
                    "                      mculab_db)\n")
        found = violations(root)
        want = ["server/service/a.cc:2: includes db/sqlite_store.h",
                "agent/boards/b.h:2: includes agent/config.h",
                "server/service/job_desk.cc:2: includes server/service/lab.h",
                "agent/run/r.cc:2: includes agent.pb.h",
                "agent/run/r.cc:3: includes agent/link/spool.h",
                "server/CMakeLists.txt: mculab_server_service links mculab_db",
                "agent/CMakeLists.txt: mculab_agent_run links mculab_proto_messages"]
        for w in want:
            if not any(v.startswith(w) for v in found):
                print(f"self-test: the checker missed {w!r}; found {found}")
                return 1
        if len(found) != len(want):
            print(f"self-test: expected {len(want)} violations, found {found}")
            return 1
    print("self-test: the checker finds what is planted")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    found = violations(sys.argv[1])
    for v in found:
        print(v)
    print(f"{len(found)} include(s) against the layer rules ({len(RULES) + len(FILE_RULES)} rules)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
