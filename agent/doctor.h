// `mculab-agent doctor`: checks an agent config against what this machine has installed and
// plugged in, board by board: the GDB server programs and their versions (OpenOCD and its target
// scripts, pyOCD (Debian's 0.13.1 has no `pyocd` command and no STM32 targets), SEGGER's J-Link
// server), the debug probes by USB serial number and their permissions, the serial ports, QEMU and
// its counting plugin, the FVP and its relay, and the job sandbox. Each finding is one line; a
// problem says what to do about it. A check that cannot be made is not reported as passed.
//
// Boards are read from the file's TOML directly (as well as through LoadAgentConfig, whose error is
// a finding), so that every backend's keys are checked even when one board fails to parse.
// Everything the checks ask the machine goes through DoctorEnv, which tests replace.
// Thread-safety: a function over its arguments.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "agent/io/probe_lister.h"
#include "agent/io/sandbox.h"
#include "agent/io/subprocess.h"
#include "common/result.h"

namespace mculab::agent {

struct DoctorFinding {
  bool ok = false;
  std::string subject;  // "nucleo-h743-1", "[sandbox]", "config"
  std::string what;     // what was found
  std::string fix;      // what to do ("" for ok findings, and when `what` says it)
};

struct DoctorEnv {
  // A program's resolved path (PATH lookup), kNotFound when absent (ResolveProgram).
  std::function<Result<std::string>(const std::string&)> which;
  // Runs `prog --version` and the like (RealProcessRunner).
  ProcessRunner* runner = nullptr;
  ProbeLister* probes = nullptr;
  // access(2): whether `path` allows `mode` (F_OK, R_OK, W_OK, X_OK) to the agent's user.
  std::function<bool(const std::filesystem::path&, int)> access;
  // Makes the job sandbox as the agent would (Sandbox::Create) and says which kind it got.
  std::function<Result<Sandbox::Kind>(const SandboxConfig&)> sandbox;
  std::filesystem::path openocd_scripts = "/usr/share/openocd/scripts";
  std::filesystem::path default_fvp_relay;    // mculab-fvp-relay beside mculab-agent ("" none)
  std::filesystem::path default_qemu_plugin;  // the QEMU counting plugin beside it ("" none)
  std::filesystem::path default_host_runner;  // mculab-runner-host beside it
  bool agent_is_root = false;
  // Whether the server answers at `server` and accepts `token` as an agent's (CheckServer); unset:
  // the server is not checked, and the findings say so.
  std::function<Status(const std::string& server, const std::string& token)> check_server;
};

// The environment of the running agent.
DoctorEnv RealDoctorEnv();

std::vector<DoctorFinding> RunDoctor(const std::filesystem::path& config_file,
                                     const DoctorEnv& env);

// "ok    nucleo-h743-1: ..." or "FAIL  nucleo-h743-1: ... -> fix: ...".
std::string FormatFinding(const DoctorFinding& f);

// Splits a command template the way a POSIX shell splits words (quotes and backslashes; no
// expansion): `openocd -c "adapter serial {serial}"` -> {"openocd", "-c", "adapter serial
// {serial}"}.
std::vector<std::string> SplitCommandLine(const std::string& line);

}  // namespace mculab::agent
