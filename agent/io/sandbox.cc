#include "agent/io/sandbox.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <set>
#include <system_error>

#include "agent/io/run_dir.h"
#include "agent/io/subprocess.h"

namespace mculab::agent {
namespace {

namespace fs = std::filesystem;

// The merged-/usr links of a Debian system (folders on an older layout): what a dynamically linked
// program needs besides /usr.
constexpr const char* kSystemRoots[] = {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"};

// The namespaces mode copies the run's files into its folder up to this size (runners, ELFs,
// plugins); a larger file (an FVP installation) is used in place.
constexpr std::uintmax_t kMaxCopiedFile = 64u << 20;

bool Under(const fs::path& p, const fs::path& dir) {
  auto rel = p.lexically_relative(dir);
  return !rel.empty() && *rel.begin() != "..";
}

}  // namespace

const char* SandboxModes() { return "bwrap, auto, namespaces, off"; }

Result<Sandbox> Sandbox::Create(const SandboxConfig& config) {
  Sandbox s;
  const std::string& mode = config.mode;
  if (mode != "bwrap" && mode != "auto" && mode != "namespaces" && mode != "off") {
    return MakeError(ErrorCode::kInvalidArgument,
                     "[sandbox] mode \"" + mode + "\" is not one of: " + SandboxModes());
  }
  if (mode == "off") return s;
  std::string user = config.user;
  if (user.empty() && ::geteuid() == 0) user = "nobody";
  if (!user.empty()) {
    // getpwnam_r: the agent may have other threads by now.
    struct passwd pw {};
    struct passwd* found = nullptr;
    std::vector<char> buf(16384);
    const int err = ::getpwnam_r(user.c_str(), &pw, buf.data(), buf.size(), &found);
    if (err != 0 || found == nullptr) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "[sandbox] user \"" + user + "\" does not exist on this machine" +
                           (err != 0 ? " (" + std::generic_category().message(err) + ")" : "") +
                           ": create it (`useradd --system --no-create-home " + user +
                           "`) or name another unprivileged user");
    }
    if (pw.pw_uid == 0) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "[sandbox] user \"" + user +
                           "\" is root: jobs' runners never run as root; name an unprivileged "
                           "user");
    }
    if (pw.pw_uid != ::geteuid()) {
      if (::geteuid() != 0) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "[sandbox] user \"" + user +
                             "\" differs from the agent's own user, which only works when the "
                             "agent runs as root: leave `user` unset to run jobs as the agent's "
                             "user");
      }
      s.uid_ = pw.pw_uid;
      s.gid_ = pw.pw_gid;
    }
    s.user_ = user;
  }
  std::string why_not_bwrap;
  if (mode == "bwrap" || mode == "auto") {
    auto bwrap = ResolveProgram(config.bwrap);
    if (bwrap) {
      s.kind_ = Kind::kBwrap;
      s.bwrap_ = *bwrap;
      auto checked = s.Check();
      if (checked.ok()) return s;
      why_not_bwrap = checked.error().message;
    } else {
      why_not_bwrap = "the job sandbox needs bubblewrap (" + bwrap.error().message +
                      "): install it with `apt-get install bubblewrap`, or name it with "
                      "[sandbox] bwrap = \"/path/to/bwrap\" in the agent's config";
    }
    if (mode == "bwrap") {
      return MakeError(ErrorCode::kFailedPrecondition,
                       why_not_bwrap +
                           ". Where bubblewrap cannot work (a chroot, a container), [sandbox] mode "
                           "= \"namespaces\" keeps runners off the network and unprivileged "
                           "without a private file system view (\"auto\" picks it by itself)");
    }
    s.fallback_reason_ = why_not_bwrap;
  }
  s.kind_ = Kind::kNamespaces;
  if (auto checked = s.Check(); !checked.ok()) return checked.error();
  return s;
}

Sandbox Sandbox::None() { return Sandbox(); }

std::string Sandbox::Describe() const {
  std::string d;
  switch (kind_) {
    case Kind::kOff:
      return "OFF (jobs' runners run unconfined)";
    case Kind::kBwrap:
      d = "bubblewrap (" + bwrap_ + ")";
      break;
    case Kind::kNamespaces:
      d = "namespaces (no network, no other processes; the host's files are visible as the "
          "sandbox's user may read them)";
      break;
  }
  if (uid_) {
    d += ", as user " + user_ + " (" + std::to_string(*uid_) + ")";
  } else {
    d += ", as the agent's user";
  }
  return d;
}

Result<std::vector<std::string>> Sandbox::Wrap(const std::vector<std::string>& argv,
                                               const std::vector<fs::path>& read_only,
                                               const fs::path& work_dir) const {
  if (argv.empty()) return MakeError(ErrorCode::kInvalidArgument, "empty command line");
  if (kind_ == Kind::kOff) return argv;
  auto program = ResolveProgram(argv[0]);
  if (!program) return program.error();
  std::error_code ec;
  const fs::path program_path = fs::absolute(*program, ec);
  std::vector<std::string> drop_privileges;
  if (uid_) {
    // setpriv drops to the unprivileged user, whose capabilities the kernel then clears.
    drop_privileges = {"/usr/bin/setpriv",
                       "--reuid=" + std::to_string(*uid_),
                       "--regid=" + std::to_string(*gid_),
                       "--clear-groups",
                       "--no-new-privs",
                       "--"};
  }
  if (kind_ == Kind::kNamespaces) {
    std::vector<std::string> out = {"/usr/bin/unshare", "--net",       "--pid", "--ipc", "--uts",
                                    "--fork",           "--kill-child"};
    if (!uid_) out.push_back("--user");
    out.push_back("--");
    out.insert(out.end(), drop_privileges.begin(), drop_privileges.end());
    // Without a mount namespace the unprivileged user sees the host's files as they are: the
    // files the run needs may sit where it cannot read them (a build under /root). Copies in the
    // run's folder, owned by the user, take their place on the command line.
    std::vector<std::string> args(argv.begin(), argv.end());
    args[0] = program_path.string();
    if (uid_) {
      std::vector<fs::path> files = {program_path};
      files.insert(files.end(), read_only.begin(), read_only.end());
      const fs::path copies = work_dir / ".sandbox-files";
      int n = 0;
      for (const auto& f : files) {
        const fs::path abs = fs::absolute(f, ec).lexically_normal();
        if (ec || Under(abs, "/usr") || !fs::is_regular_file(abs, ec)) continue;
        if (fs::file_size(abs, ec) > kMaxCopiedFile || ec) continue;
        fs::create_directories(copies, ec);
        const fs::path copy = copies / (std::to_string(n++) + "-" + abs.filename().string());
        if (!fs::copy_file(abs, copy, fs::copy_options::none, ec) || ec) {
          return MakeError(ErrorCode::kInternal,
                           "copying " + abs.string() + " into the run's folder: " + ec.message());
        }
        for (const fs::path& p : {copies, copy}) {
          if (::chown(p.c_str(), *uid_, *gid_) != 0) {
            return MakeError(ErrorCode::kInternal, ErrnoMessage("chown " + p.string(), errno));
          }
        }
        for (auto& a : args) {
          for (std::size_t at = a.find(abs.string()); at != std::string::npos;
               at = a.find(abs.string(), at + copy.string().size())) {
            a.replace(at, abs.string().size(), copy.string());
          }
        }
      }
    }
    out.insert(out.end(), {"/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "HOME=" + work_dir.string(),
                           "LC_ALL=C"});
    out.insert(out.end(), args.begin(), args.end());
    return out;
  }

  std::vector<std::string> out = {bwrap_};
  if (uid_) {
    // Root: every namespace but the user one (setpriv below needs the real uid map); this also
    // works in a chroot, where a new user namespace is refused.
    out.insert(out.end(), {"--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
                           "--unshare-cgroup-try"});
  } else {
    out.push_back("--unshare-all");
  }
  out.insert(out.end(), {
                            "--die-with-parent",
                            "--new-session",
                            "--clearenv",
                            "--setenv",
                            "PATH",
                            "/usr/bin:/bin",
                            "--setenv",
                            "HOME",
                            work_dir.string(),
                            "--setenv",
                            "LC_ALL",
                            "C",
                            "--ro-bind",
                            "/usr",
                            "/usr",
                        });
  for (const char* root : kSystemRoots) {
    const fs::path p(root);
    if (fs::is_symlink(p, ec)) {
      out.insert(out.end(), {"--symlink", fs::read_symlink(p, ec).string(), root});
    } else if (fs::is_directory(p, ec)) {
      out.insert(out.end(), {"--ro-bind", root, root});
    }
  }
  out.insert(out.end(), {"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"});
  // bwrap makes the folders leading to a mount point root's alone (0700): the sandbox's user must
  // be able to walk to the files it is given.
  std::set<fs::path> folders = {"/", "/tmp", "/proc", "/dev", "/usr"};
  auto make_folders = [&](const fs::path& dest) {
    fs::path at = "/";
    for (const auto& part : dest.parent_path().relative_path()) {
      at /= part;
      if (folders.insert(at).second) {
        out.insert(out.end(), {"--perms", "0755", "--dir", at.string()});
      }
    }
  };
  make_folders("/etc/ld.so.cache");
  out.insert(out.end(), {"--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache"});
  auto bind_ro = [&](const fs::path& p) {
    const fs::path abs = fs::absolute(p, ec).lexically_normal();
    if (ec || Under(abs, "/usr") || !fs::exists(abs, ec)) return;
    // The real file (links resolved) is mounted where the process looks for it.
    const fs::path real = fs::canonical(abs, ec);
    if (ec) return;
    make_folders(abs);
    out.insert(out.end(), {"--ro-bind", real.string(), abs.string()});
  };
  bind_ro(program_path);
  for (const auto& p : read_only) bind_ro(p);
  // No --chdir: bwrap would enter the folder before dropping to the sandbox's user, who owns it.
  make_folders(work_dir);
  out.insert(out.end(), {"--bind", work_dir.string(), work_dir.string()});
  if (!uid_) out.insert(out.end(), {"--cap-drop", "ALL"});
  out.push_back("--");
  out.insert(out.end(), drop_privileges.begin(), drop_privileges.end());
  out.push_back(program_path.string());
  out.insert(out.end(), argv.begin() + 1, argv.end());
  return out;
}

Status Sandbox::PrepareWorkDir(const fs::path& work_dir) const {
  if (kind_ == Kind::kOff || !uid_) return {};
  auto give = [&](const fs::path& p) -> Status {
    if (::lchown(p.c_str(), *uid_, *gid_) != 0) {
      return MakeError(
          ErrorCode::kInternal,
          ErrnoMessage("giving " + p.string() + " to the sandbox's user " + user_, errno));
    }
    return {};
  };
  if (auto s = give(work_dir); !s) return s;
  // What the board already wrote there (the workload), whatever the agent's umask.
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(work_dir, ec)) {
    if (auto s = give(e.path()); !s) return s;
  }
  return {};
}

Status Sandbox::Check() const {
  if (kind_ == Kind::kOff) return {};
  auto dir = RunDir::Create("mculab-sandbox-check-");
  if (!dir) return dir.error();
  auto argv = Wrap({"/usr/bin/true"}, {}, (*dir)->path());
  if (!argv) return argv.error();
  if (auto s = PrepareWorkDir((*dir)->path()); !s) return s;
  auto capture = (*dir)->CreateCapture();
  if (!capture) return capture.error();
  SpawnOptions so;
  so.argv = *argv;
  so.stderr_fd = capture->get();
  auto proc = Subprocess::Spawn(so);
  if (!proc) return proc.error();
  auto st = (*proc)->Wait(std::chrono::seconds(20));
  const std::string err = ReadTail(capture->get());
  if (!st) return MakeError(ErrorCode::kUnavailable, "the sandbox check did not finish in 20 s");
  if (!st->success()) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "the job sandbox does not work on this machine: " + JoinArgv(*argv) +
                         " ended " + st->ToString() + (err.empty() ? "" : ": " + err) +
                         (kind_ == Kind::kBwrap
                              ? ". bubblewrap needs namespaces (run the agent as root, or allow "
                                "unprivileged user namespaces)"
                              : ""));
  }
  return {};
}

}  // namespace mculab::agent
