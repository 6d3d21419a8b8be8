// LabConfig: the server's tunables, from an optional TOML file (--config):
//
//   max_artifact_bytes = 67108864   # largest upload accepted (64 MiB)
//   default_timeout_s = 600         # a job's timeout when its submitter gives none
//   max_attempts = 3                # runs a job gets before infrastructure failures fail it
//   heartbeat_ms = 5000             # how often agents are asked to send a heartbeat
//   pass_cycles_tolerance = 0.02    # how far a job's passes may disagree on cycles before the
//                                   # job is flagged (relative; emulated boards: exact, always)
//   heartbeat_timeout_ms = 0        # an agent silent this long is dropped (0: 3 x heartbeat_ms)
//   reconnect_grace_s = 30          # after a restart, how long a run on a board waits for its
//                                   # agent to reconnect and claim it before it is requeued
//   tls_cert = "server.pem"         # TLS for gRPC: certificate chain and private key (PEM),
//   tls_key = "server.key"          # both or neither; relative to the config file's folder
//   cancel_grace_ms = 10000         # a cancelled run's agent must confirm within this, or the
//                                   # board goes offline with health unknown
//   max_reservation_s = 604800      # longest `mculab reserve --for`
//
//   # Limits that keep one user or one agent from starving the others (0 is not allowed: every
//   # limit is finite; raise it instead):
//   max_user_artifact_bytes = 1073741824  # bytes of uploads one user may keep (1 GiB)
//   max_user_artifacts = 1000       # uploads one user may keep
//   artifact_grace_s = 86400        # an upload no unfinished job references is deleted this long
//                                   # after it was made
//   max_queued_jobs_per_user = 1000 # one user's jobs waiting for a board
//   max_boards_per_agent = 64       # boards one agent may register
//   max_tags_per_board = 32         # tags per registered board
//   upload_timeout_s = 600          # an upload (mculab submit --firmware, --cases) must end within
//
//   # The network endpoints' caps (slowloris, connection and stream floods):
//   http_max_connections = 512      # open HTTP connections; beyond, new ones are closed at once
//   http_max_connections_per_address = 64   # the same, per client IP address
//   http_reserved_connections = 64  # of those, kept for requests with a valid token (others
//                                   # arriving when only these are left get 503)
//   http_max_event_streams = 128    # open GET /api/v1/events streams (beyond: 503)
//   http_max_event_streams_per_user = 16    # the same per user (429)
//   http_max_event_streams_per_address = 32 # the same per client IP address (429)
//   http_max_stream_pending_bytes = 1048576 # events not yet written to a slow stream; beyond,
//                                   # the stream ends and the page reconnects
//   http_header_timeout_ms = 10000  # from a request's first byte to its end (slowloris)
//   http_idle_timeout_s = 60        # a keep-alive connection without a request
//   http_write_timeout_s = 30       # a client that reads nothing this long is dropped
//   grpc_max_concurrent_streams = 100  # gRPC streams one connection may have open at once
//   grpc_max_threads = 256          # gRPC handler threads of the whole server (each agent link
//                                   # and upload holds one while it runs)
//   grpc_max_connections = 4096     # open gRPC connections (at most what the descriptor limit
//                                   # leaves after a margin for everything else); beyond, a
//                                   # new connection is closed at once
//   grpc_max_connections_per_address = 256  # the same, per client IP address
//   grpc_reserved_connections = 64  # of those, kept for connections that authenticate
//   grpc_auth_timeout_ms = 10000    # a connection without an authenticated call (or an HTTP/2
//                                   # handshake) this long after its accept is closed
//
//   max_model_arena = 67108864      # the most RAM a model job may plan (arena, persistent,
//                                   # scratch) on a board that declares no ram_bytes (64 MiB)
//   store = "sqlite:mculab.db"      # the database (db/lab_store.h): sqlite:PATH (relative to the
//                                   # home) or postgresql://[user@]host[:port]/db (a password
//                                   # from PGPASSFILE or ~/.pgpass); --store overrides it
//   approve_new_boards = false      # a board an agent registers for the first time waits for
//                                   # `mculab board BOARD --approve` before its health check;
//                                   # unset: true when tls_cert is set, else false
//
//   [notify]                        # alerts (server/service/alerts.h)
//   webhooks = ["https://hooks.slack.com/services/..."]  # POSTed {"text": ...}; none: no alerts
//   timeout_ms = 5000               # one POST, connect to reply
//   max_attempts = 6                # per alert and webhook, 1 s, 2 s, 4 s, ... apart
//   poll_ms = 2000                  # how often follows are checked for new change points
//   web_url = "http://lab:8080/"    # the web page's address, for the alerts' links
//   ca_file = "ca.pem"              # trusted certificates for https:// (default: the system's)
//
//   [health]
//   checks = true                   # run a health-check job when a board's health is unknown
//   max_failures = 3                # failed checks in a row that make a board bad
//   tolerance = 0.0                 # allowed relative difference from the calibration
//   [health.expected]               # the health check's value per board kind (else the
//   corstone300-qemu = 12345        # board's first passing check calibrates it)
//
// Unknown keys are an error (a typo should not silently keep a default).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace mculab::server {

struct LabConfig {
  std::uint64_t max_artifact_bytes = 64ull << 20;
  std::uint32_t default_timeout_s = 600;
  std::uint32_t max_attempts = 3;
  std::uint32_t heartbeat_ms = 5000;
  double pass_cycles_tolerance = 0.02;
  std::uint32_t heartbeat_timeout_ms = 0;  // 0: 3 x heartbeat_ms (HeartbeatTimeoutMs())
  std::uint32_t reconnect_grace_s = 30;
  std::filesystem::path tls_cert;  // empty: plaintext gRPC
  std::filesystem::path tls_key;

  std::int64_t HeartbeatTimeoutMs() const {
    return heartbeat_timeout_ms != 0 ? heartbeat_timeout_ms : 3 * std::int64_t{heartbeat_ms};
  }
  std::uint32_t cancel_grace_ms = 10000;
  std::uint32_t max_reservation_s = 7 * 24 * 3600;
  bool health_checks = true;
  std::uint32_t health_max_failures = 3;
  double health_tolerance = 0.0;
  std::map<std::string, std::int64_t> health_expected;  // board kind -> value
  // Limits (see above); errors that enforce them name the key.
  std::uint64_t max_user_artifact_bytes = 1ull << 30;
  std::uint32_t max_user_artifacts = 1000;
  std::uint32_t artifact_grace_s = 24 * 3600;
  std::uint32_t max_queued_jobs_per_user = 1000;
  std::uint32_t max_boards_per_agent = 64;
  std::uint32_t max_tags_per_board = 32;
  std::uint32_t upload_timeout_s = 600;
  // The network endpoints' caps (see above); the defaults are HttpServerOptions' and
  // rpc::kMaxConcurrentStreams / rpc::kMaxThreads.
  std::uint32_t http_max_connections = 512;
  std::uint32_t http_max_connections_per_address = 64;
  std::uint32_t http_reserved_connections = 64;
  std::uint32_t http_max_event_streams = 128;
  std::uint32_t http_max_event_streams_per_user = 16;
  std::uint32_t http_max_event_streams_per_address = 32;
  std::uint64_t http_max_stream_pending_bytes = 1 << 20;
  std::uint32_t http_header_timeout_ms = 10'000;
  std::uint32_t http_idle_timeout_s = 60;
  std::uint32_t http_write_timeout_s = 30;
  std::uint32_t grpc_max_concurrent_streams = 100;
  std::uint32_t grpc_max_threads = 256;
  std::uint32_t grpc_max_connections = 4096;
  std::uint32_t grpc_max_connections_per_address = 256;
  std::uint32_t grpc_reserved_connections = 64;
  std::uint32_t grpc_auth_timeout_ms = 10'000;
  // Admission of model jobs on boards that declare no RAM.
  std::uint64_t max_model_arena = 64ull << 20;
  // New boards need an admin's approval; unset: whether TLS is configured (ApproveNewBoards()).
  std::optional<bool> approve_new_boards;
  // The store's URL (db/lab_store.h); empty: the SQLite file mculab.db in the home.
  std::string store;

  // [notify]
  std::vector<std::string> notify_webhooks;
  std::uint32_t notify_timeout_ms = 5000;
  std::uint32_t notify_max_attempts = 6;
  std::uint32_t notify_poll_ms = 2000;
  std::string notify_web_url;
  std::filesystem::path notify_ca_file;  // relative to the config file's folder

  bool ApproveNewBoards() const { return approve_new_boards.value_or(!tls_cert.empty()); }
};

Result<LabConfig> ParseLabConfig(std::string_view toml_text, std::string_view origin);
Result<LabConfig> LoadLabConfig(const std::filesystem::path& path);

}  // namespace mculab::server
