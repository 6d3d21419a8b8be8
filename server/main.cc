// mculab-server: flags, config, the store, the Lab, the gRPC endpoint, the HTTP endpoint (web
// page, JSON API, events, metrics), signals.
//
// Logs go to stderr. Exactly one line contains "mculab-server ready" (with the gRPC address and
// the web page's URL) once calls are accepted. SIGINT/SIGTERM stop it cleanly: the Lab stops,
// running calls end, queued writes are committed, the database is closed.
#include <fcntl.h>
#include <signal.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "common/crash_point.h"
#include "db/lab_store.h"
#include "server/admin/admin.h"
#include "server/http/router.h"
#include "server/http/server.h"
#include "server/http/static_files.h"
#include "server/http/webhook_client.h"
#include "server/rpc/server.h"
#include "server/service/alerts.h"
#include "server/service/clock.h"
#include "server/service/config.h"
#include "server/service/lab.h"
#include "server/service/notifier.h"
#include "server/service/queries.h"

namespace {

std::string EnvOr(const char* name, std::string fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : fallback;
}

int Fail(const std::string& message) {
  spdlog::error("{}", message);
  return 1;
}

// Every connection costs a descriptor, and the usual soft limit (1024) is far below what the
// connection caps allow: take the hard limit, which needs no privilege.
void RaiseDescriptorLimit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return;
  const rlim_t was = limit.rlim_cur;
  limit.rlim_cur = limit.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &limit) == 0) {
    spdlog::debug("descriptor limit raised from {} to {}", was, limit.rlim_cur);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mculab-server: the mculab lab server (jobs, boards, results)", "mculab-server"};
  std::string home;
  std::string listen;
  std::string config_path;
  std::string http_listen;
  std::string web_root;
  std::string store_url;
  std::string log_level = "info";
  bool version = false;
  app.add_option("--home", home,
                 "State directory (database, artifacts); default $MCULAB_HOME or "
                 "~/.local/share/mculab");
  app.add_option("--grpc-listen", listen,
                 "gRPC address to listen on; default 0.0.0.0:$MCULAB_GRPC_PORT or 0.0.0.0:7420");
  app.add_option("--http-listen", http_listen,
                 "HTTP address for the web page and its API (HOST:PORT, port 0 picks a free one, "
                 "'none' turns HTTP off); default 0.0.0.0:$MCULAB_HTTP_PORT or 0.0.0.0:8080");
  app.add_option("--web-root", web_root,
                 "Folder of the web page; default the source tree's web/ beside the build "
                 "(<exe>/../../web), else <exe>/../share/mculab/web, else /usr/share/mculab/web");
  app.add_option("--store", store_url,
                 "The database: sqlite:PATH (relative to --home; default sqlite:mculab.db) or "
                 "postgresql://[user@]host[:port]/database (a password from PGPASSFILE or "
                 "~/.pgpass); overrides the config's store");
  app.add_option("--config", config_path,
                 "TOML file of the server's tunables (every key is optional; listed below)");
  // Every key LoadLabConfig accepts (server/service/config.h documents each);
  // tests/unit/server/check_server_help.py keeps this list complete.
  app.footer(
      "--config keys (TOML):\n"
      "  max_artifact_bytes = 67108864   largest upload accepted\n"
      "  default_timeout_s = 600         a job's timeout when its submitter gives none\n"
      "  max_attempts = 3                runs a job gets before infrastructure failures fail it\n"
      "  heartbeat_ms = 5000             how often agents send a heartbeat\n"
      "  heartbeat_timeout_ms = 0        an agent silent this long is dropped (0: 3 x "
      "heartbeat_ms)\n"
      "  reconnect_grace_s = 30          after a restart, how long a run waits for its agent\n"
      "  cancel_grace_ms = 10000         a cancelled run's agent must confirm within this\n"
      "  max_reservation_s = 604800      longest `mculab reserve --for`\n"
      "  pass_cycles_tolerance = 0.02    how far passes may disagree on cycles before a flag\n"
      "  max_user_artifact_bytes = 1073741824  bytes of uploads one user may keep\n"
      "  max_user_artifacts = 1000       uploads one user may keep\n"
      "  artifact_grace_s = 86400        an upload no unfinished job uses is deleted after this\n"
      "  max_queued_jobs_per_user = 1000 one user's jobs waiting for a board\n"
      "  max_boards_per_agent = 64       boards one agent may register\n"
      "  max_tags_per_board = 32         tags per registered board\n"
      "  upload_timeout_s = 600          an upload must end within this\n"
      "  http_max_connections = 512      open HTTP connections (more are closed at once)\n"
      "  http_max_connections_per_address = 64   the same, per client IP address\n"
      "  http_reserved_connections = 64  of those, kept for requests with a valid token\n"
      "  http_max_event_streams = 128    open event streams (GET /api/v1/events; more: 503)\n"
      "  http_max_event_streams_per_user = 16    the same per user (429)\n"
      "  http_max_event_streams_per_address = 32 the same per client IP address (429)\n"
      "  http_max_stream_pending_bytes = 1048576 unsent events before a slow stream ends\n"
      "  http_header_timeout_ms = 10000  a request must arrive whole within this (slowloris)\n"
      "  http_idle_timeout_s = 60        a keep-alive connection without a request is closed\n"
      "  http_write_timeout_s = 30       a client that reads nothing this long is dropped\n"
      "  grpc_max_concurrent_streams = 100  gRPC streams per connection\n"
      "  grpc_max_threads = 256          gRPC handler threads (agent links, uploads, calls)\n"
      "  grpc_max_connections = 4096     open gRPC connections (at most what the descriptor\n"
      "                                  limit allows; more are closed at once)\n"
      "  grpc_max_connections_per_address = 256  the same, per client IP address\n"
      "  grpc_reserved_connections = 64  of those, kept for connections that authenticate\n"
      "  grpc_auth_timeout_ms = 10000    a connection without an authenticated call is closed\n"
      "  tls_cert = \"server.pem\"         TLS for gRPC: certificate chain and key (PEM), both or\n"
      "  tls_key = \"server.key\"          neither; relative to the config file's folder\n"
      "  max_model_arena = 67108864      most RAM a model may plan on a board without ram_bytes\n"
      "  store = \"sqlite:mculab.db\"      the database: sqlite:PATH or postgresql://... "
      "(--store)\n"
      "  approve_new_boards = false      new boards wait for `mculab board B --approve` (unset:\n"
      "                                  true when tls_cert is set)\n"
      "  [notify]                        alerts (change points of follows, failed gates)\n"
      "  webhooks = [\"https://...\"]      URLs POSTed {\"text\": ...} (Slack, Matrix)\n"
      "  timeout_ms = 5000               one POST, connect to reply\n"
      "  max_attempts = 6                per alert and webhook, 1 s, 2 s, 4 s ... apart\n"
      "  poll_ms = 2000                  how often follows are checked\n"
      "  web_url = \"http://lab:8080/\"    the web page's address, for links\n"
      "  ca_file = \"ca.pem\"              trusted certificates for https://\n"
      "  [health]\n"
      "  checks = true                   run a health check when a board's health is unknown\n"
      "  max_failures = 3                failed checks in a row that make a board bad\n"
      "  tolerance = 0.0                 allowed relative difference from the calibration\n"
      "  [health.expected]               the health check's value per board kind\n"
      "  corstone300-qemu = 12345\n"
      "Unknown keys are an error.");
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));
  app.add_flag("--version", version, "Print the version and exit");
  mculab::server::admin::Admin admin(app);  // `mculab-server admin ...` (server/admin/admin.h)
  CLI11_PARSE(app, argc, argv);
  if (version) {
    std::printf("mculab-server %s\n", MCULAB_VERSION);
    return 0;
  }
  if (home.empty()) {
    home = EnvOr("MCULAB_HOME", EnvOr("HOME", "/tmp") + "/.local/share/mculab");
  }
  if (admin.chosen()) {
    // The store the server would open: --store, else the config's.
    if (store_url.empty() && !config_path.empty()) {
      auto loaded = mculab::server::LoadLabConfig(config_path);
      if (!loaded.ok()) return Fail(loaded.error().message);
      store_url = loaded->store;
    }
    return admin.Run(home, store_url);
  }

  spdlog::set_default_logger(spdlog::stderr_color_mt("mculab-server"));
  spdlog::set_level(spdlog::level::from_str(log_level));
  spdlog::set_pattern("%Y-%m-%d %H:%M:%S.%e %^%-5l%$ %v");

  if (listen.empty()) listen = "0.0.0.0:" + EnvOr("MCULAB_GRPC_PORT", "7420");
  if (http_listen.empty()) http_listen = "0.0.0.0:" + EnvOr("MCULAB_HTTP_PORT", "8080");
  const bool http_on = http_listen != "none";
  std::filesystem::path web_dir;
  if (!web_root.empty()) {
    std::error_code wec;
    if (!std::filesystem::is_directory(web_root, wec)) {
      return Fail("--web-root " + web_root + " is not a folder");
    }
    web_dir = web_root;
  } else if (http_on) {
    std::error_code wec;
    web_dir =
        mculab::server::http::FindWebRoot(std::filesystem::read_symlink("/proc/self/exe", wec));
  }

  mculab::server::LabConfig config;
  if (!config_path.empty()) {
    auto loaded = mculab::server::LoadLabConfig(config_path);
    if (!loaded.ok()) return Fail(loaded.error().message);
    config = *loaded;
  }

  std::error_code ec;
  std::filesystem::create_directories(home, ec);
  if (ec) return Fail("cannot create home directory " + home + ": " + ec.message());
  // One server per home: a second one would change the database behind the first one's back.
  const std::string lock_path = home + "/mculab-server.lock";
  const int lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd < 0) return Fail("cannot open " + lock_path + ": " + std::strerror(errno));
  if (::flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    return Fail("another mculab-server is already using " + home);
  }

  // Signals are taken by sigwait below; every thread started from here on inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  RaiseDescriptorLimit();
  mculab::server::rpc::RouteGrpcLogsToSpdlog();
  if (store_url.empty()) store_url = config.store;
  auto store = mculab::db::OpenStore(store_url, home);
  if (!store.ok()) return Fail(store.error().message);
  spdlog::info("store {}", store_url.empty() ? std::string("sqlite:mculab.db")
                                             : mculab::db::RedactStoreUrl(store_url));
  mculab::server::SystemClock clock;
  mculab::server::Accounts accounts(**store, clock);
  mculab::server::ArtifactStore artifacts(std::filesystem::path(home) / "artifacts",
                                          mculab::server::ArtifactLimitsOf(config), **store, clock);
  mculab::server::Lab lab(**store, clock, config, accounts, artifacts);
  if (mculab::Status s = lab.Start(); !s.ok()) return Fail(s.error().message);

  // Alerts: follows' change points and failed gates, posted to [notify] webhooks.
  mculab::server::NotifyOptions notify;
  notify.webhooks = config.notify_webhooks;
  notify.timeout_ms = config.notify_timeout_ms;
  notify.max_attempts = config.notify_max_attempts;
  notify.ca_file = config.notify_ca_file.string();
  mculab::server::Notifier notifier(
      notify,
      [ca = notify.ca_file](const std::string& url, const std::string& body,
                            std::uint32_t timeout_ms) {
        return mculab::server::PostJson(url, body, timeout_ms, ca);
      },
      clock);
  mculab::server::LabQueries alert_queries(lab, **store);
  mculab::server::Alerts alerts(lab, alert_queries, **store, **store, notifier, clock,
                                {config.notify_poll_ms, config.notify_web_url});
  alerts.Start();
  if (notifier.enabled()) {
    spdlog::info("alerts go to {} webhook{}", notify.webhooks.size(),
                 notify.webhooks.size() == 1 ? "" : "s");
  }

  auto rpc = mculab::server::rpc::RpcServer::Start(lab, **store, listen, &alerts);
  if (!rpc.ok()) {
    alerts.Stop();
    lab.Stop();
    (*store)->Close();
    return Fail(rpc.error().message);
  }
  mculab::server::http::Router router(lab, **store, clock, {web_dir});
  std::unique_ptr<mculab::server::http::HttpServer> http;
  std::string http_text = "HTTP off";
  if (http_on) {
    mculab::server::http::HttpServerOptions http_options;
    http_options.max_connections = config.http_max_connections;
    http_options.max_connections_per_address = config.http_max_connections_per_address;
    http_options.reserved_connections = config.http_reserved_connections;
    http_options.max_event_streams = config.http_max_event_streams;
    http_options.max_event_streams_per_user = config.http_max_event_streams_per_user;
    http_options.max_event_streams_per_address = config.http_max_event_streams_per_address;
    http_options.max_stream_pending_bytes = config.http_max_stream_pending_bytes;
    http_options.header_timeout = std::chrono::milliseconds(config.http_header_timeout_ms);
    http_options.idle_timeout = std::chrono::seconds(config.http_idle_timeout_s);
    http_options.write_timeout = std::chrono::seconds(config.http_write_timeout_s);
    auto started =
        mculab::server::http::HttpServer::Start(router, http_listen, std::move(http_options));
    if (!started.ok()) {
      (*rpc)->Stop(std::chrono::seconds(0));
      alerts.Stop();
      lab.Stop();
      (*store)->Close();
      return Fail(started.error().message);
    }
    http = std::move(*started);
    http_text = "web page and HTTP API on http://" + http->address() + "/";
    if (web_dir.empty()) {
      spdlog::warn("no web page found (give --web-root): HTTP serves the API only");
    } else {
      spdlog::info("web page from {}", web_dir.string());
    }
  }
  if (auto users = (*store)->ListUsers(); users.ok() && users->empty()) {
    spdlog::warn(
        "no users yet: every call needs a token; `mculab-server admin user add NAME --role admin` "
        "makes one");
  }
  if (mculab::CrashPointsCompiledIn()) {
    spdlog::warn(
        "this build has the crash-point test hook (MCULAB_CRASH_POINTS): MCULAB_CRASH_AT in the "
        "environment ends the server at a named point; do not use it in production");
  }
  spdlog::info("mculab-server ready: gRPC on {}{}, {}, home {}", (*rpc)->address(),
               (*rpc)->tls() ? " (TLS)" : "", http_text, home);

  int sig = 0;
  sigwait(&signals, &sig);
  spdlog::info("stopping ({})", sig == SIGINT ? "SIGINT" : "SIGTERM");
  // Event streams end and running requests finish before the Lab stops.
  if (http) http->Stop();
  lab.Stop();  // ends watches; from now on agents' disconnects leave job states alone
  (*rpc)->Stop(std::chrono::seconds(2));
  alerts.Stop();
  notifier.Stop();
  (*store)->Close();  // commits every queued write
  spdlog::info("stopped");
  ::close(lock_fd);
  return 0;
}
