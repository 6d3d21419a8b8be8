#include "tests/unit/db/pg_cluster.h"

#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

namespace mculab::db::testing {
namespace {

const std::filesystem::path kBin = "/usr/lib/postgresql/15/bin";

// Runs `argv` (as `user` when set), output to `log`; its exit status.
int RunTool(const std::vector<std::string>& argv, const struct passwd* user,
            const std::filesystem::path& log) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    if (user != nullptr) {
      if (::setgroups(0, nullptr) != 0 || ::setgid(user->pw_gid) != 0 ||
          ::setuid(user->pw_uid) != 0) {
        ::_exit(126);
      }
    }
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string Tail(const std::filesystem::path& log) {
  std::ifstream in(log);
  std::stringstream s;
  s << in.rdbuf();
  const std::string text = s.str();
  return text.size() > 2000 ? text.substr(text.size() - 2000) : text;
}

// Stops the cluster when the binary's tests end.
class StopAtEnd : public ::testing::Environment {
 public:
  void TearDown() override {
    if (auto c = cluster(); c != nullptr) c->Stop();
  }
  static PgCluster*& cluster() {
    static PgCluster* c = nullptr;
    return c;
  }
};

[[maybe_unused]] const auto* const kStopAtEnd = ::testing::AddGlobalTestEnvironment(new StopAtEnd);

}  // namespace

Result<PgCluster*> PgCluster::Shared() {
  static PgCluster* cluster = nullptr;
  static std::optional<Error> failed;
  if (cluster == nullptr && !failed) {
    auto* c = new PgCluster();
    if (Status s = c->Start(); !s.ok()) {
      failed = s.error();
      delete c;
    } else {
      cluster = c;
      StopAtEnd::cluster() = c;
    }
  }
  if (failed) return *failed;
  return cluster;
}

Status PgCluster::Start() {
  if (!std::filesystem::exists(kBin / "initdb")) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     (kBin / "initdb").string() +
                         " is missing: install postgresql-15 (deploy/install-deps.sh does)");
  }
  std::string tmpl = (std::filesystem::temp_directory_path() / "mculab-pg-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) return MakeError(ErrorCode::kInternal, "mkdtemp failed");
  dir_ = tmpl;
  const struct passwd* user = nullptr;
  if (::geteuid() == 0) {
    user = ::getpwnam("nobody");
    if (user == nullptr) return MakeError(ErrorCode::kInternal, "no user nobody to run as");
    if (::chown(dir_.c_str(), user->pw_uid, user->pw_gid) != 0) {
      return MakeError(ErrorCode::kInternal, "cannot give " + dir_.string() + " to nobody");
    }
  }
  // Any port: it only names the socket file in our own folder.
  port_ = 5432;
  const std::filesystem::path log = dir_ / "server.log";
  { std::ofstream create(log); }
  if (user != nullptr) (void)::chown(log.c_str(), user->pw_uid, user->pw_gid);
  if (RunTool({(kBin / "initdb").string(), "-D", (dir_ / "data").string(), "--auth=trust", "-U",
               "mculab", "--encoding=UTF8", "--locale=C.UTF-8", "-N"},
              user, log) != 0) {
    return MakeError(ErrorCode::kInternal, "initdb failed:\n" + Tail(log));
  }
  const std::string options = "-k " + dir_.string() + " -p " + std::to_string(port_) +
                              " -c listen_addresses='' -c fsync=off";
  if (RunTool({(kBin / "pg_ctl").string(), "-D", (dir_ / "data").string(), "-o", options, "-l",
               log.string(), "start", "-w"},
              user, log) != 0) {
    return MakeError(ErrorCode::kInternal, "pg_ctl start failed:\n" + Tail(log));
  }
  started_ = true;
  return {};
}

void PgCluster::Stop() {
  if (!started_) return;
  started_ = false;
  const struct passwd* user = ::geteuid() == 0 ? ::getpwnam("nobody") : nullptr;
  (void)RunTool(
      {(kBin / "pg_ctl").string(), "-D", (dir_ / "data").string(), "stop", "-m", "fast", "-w"},
      user, dir_ / "server.log");
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string PgCluster::Url(const std::string& name, const std::string& extra) const {
  return "postgresql:///" + name + "?host=" + dir_.string() + "&port=" + std::to_string(port_) +
         "&user=mculab" + (extra.empty() ? "" : "&" + extra);
}

Result<std::string> PgCluster::NewDatabase() {
  const std::string name =
      "test_" + std::to_string(::getpid()) + "_" + std::to_string(++databases_);
  if (RunTool({(kBin / "createdb").string(), "-h", dir_.string(), "-p", std::to_string(port_), "-U",
               "mculab", name},
              nullptr, dir_ / "createdb.log") != 0) {
    return MakeError(ErrorCode::kInternal, "createdb failed:\n" + Tail(dir_ / "createdb.log"));
  }
  return Url(name);
}

}  // namespace mculab::db::testing
