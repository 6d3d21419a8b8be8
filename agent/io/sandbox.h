// Sandbox: how the agent confines every process it starts on behalf of a job (QEMU, the FVP, a host
// runner, a job's own uploaded runner). Such a process runs under bubblewrap (Debian's `bwrap`):
// - a read-only view of the system's programs and libraries (/usr and the merged-/usr links) and
//   of the files the run names (the runner, the firmware, the QEMU plugin), nothing else of the
//   host: no /home, no /root, no /etc beyond the loader cache, no agent token, spool or cache;
// - the run's own folder writable, a private /tmp, /proc and a minimal /dev;
// - new user-visible namespaces: no network (only its own loopback), no other process, no IPC;
// - a clean environment, a new session (no terminal to inject into), dies with the agent;
// - never as root: when the agent runs as root, the process drops to an unprivileged user
//   (`user`, default "nobody") inside the sandbox, with no capabilities and no_new_privs.
// What it does not stop: a runner may use all the CPU and memory it is given until the run's
// timeout kills it, and it reads whatever the named files contain. See README "Team set-up".
//
// Where bubblewrap cannot build its mount namespace (a chroot, a container without the right
// capabilities), `mode = "namespaces"` (or "auto", which falls back to it and says why) keeps
// everything above except the private view of the file system: util-linux's `unshare` gives the
// process no network, no other process, no IPC, and `setpriv` an unprivileged user, so it reads
// only what that user may read. The files a run is given are copied into its folder (owned by
// that user) and the command line names the copies, since the originals may be out of its reach.
//
// Thread-safety: a value type; Wrap() and PrepareWorkDir() may be called from any thread.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace mculab::agent {

struct SandboxConfig {
  // "bwrap" (the agent refuses to start when bubblewrap does not work here), "auto" (bubblewrap,
  // else "namespaces", with the reason logged), "namespaces", or "off" (no confinement: unsafe).
  std::string mode = "bwrap";
  std::string bwrap = "bwrap";  // the bubblewrap program
  std::string user;             // run as this user; "": "nobody" when the agent is root
};

inline SandboxConfig MakeSandboxConfig(std::string mode, std::string bwrap = "bwrap",
                                       std::string user = "") {
  SandboxConfig c;
  c.mode = std::move(mode);
  c.bwrap = std::move(bwrap);
  c.user = std::move(user);
  return c;
}

// The modes, for messages: "bwrap, auto, namespaces, off".
const char* SandboxModes();

class Sandbox {
 public:
  enum class Kind { kOff, kBwrap, kNamespaces };

  // Resolves the user and the programs and, for bwrap and auto, runs a trivial program in the
  // sandbox (Check()), so that a machine where it cannot work is found at the agent's start-up,
  // with the reason, and not at the first job. Errors say what to install or change.
  static Result<Sandbox> Create(const SandboxConfig& config);
  // No confinement: for tests of other layers and for `[sandbox] mode = "off"`.
  static Sandbox None();

  bool enabled() const { return kind_ != Kind::kOff; }
  Kind kind() const { return kind_; }
  // Whether the process sees only the files it is given (bubblewrap), not the host's.
  bool private_files() const { return kind_ == Kind::kBwrap; }
  // Whether the process runs as another (unprivileged) user than the agent: the agent is root.
  bool drops_privileges() const { return uid_.has_value(); }
  // Why "auto" fell back to namespaces ("" otherwise): for a loud start-up warning.
  const std::string& fallback_reason() const { return fallback_reason_; }
  // For the agent's start-up log: "bubblewrap (/usr/bin/bwrap), as user nobody (65534)".
  std::string Describe() const;

  // The command line that runs `argv` inside the sandbox. `argv[0]` must be a resolved path or a
  // name found in PATH; `read_only` are the files or folders the process reads (missing ones are
  // skipped); `work_dir` is the run's folder, writable, bound at the same path. Unchanged when the
  // sandbox is off.
  Result<std::vector<std::string>> Wrap(const std::vector<std::string>& argv,
                                        const std::vector<std::filesystem::path>& read_only,
                                        const std::filesystem::path& work_dir) const;

  // Gives the run's folder to the sandbox's user (when it differs from the agent's), so that the
  // process can create its socket and files there. Call it after Wrap() (whose copies it gives
  // too) and just before the process starts: from then on the folder's names are the process's,
  // and the agent uses only descriptors it already holds (RunDir).
  Status PrepareWorkDir(const std::filesystem::path& work_dir) const;

  // Runs a trivial program in the sandbox; the error says what failed.
  Status Check() const;

 private:
  Sandbox() = default;

  Kind kind_ = Kind::kOff;
  std::string fallback_reason_;
  std::string bwrap_;
  std::string user_;
  std::optional<uid_t> uid_;  // set: drop to this user inside (the agent is root)
  std::optional<gid_t> gid_;
};

}  // namespace mculab::agent
