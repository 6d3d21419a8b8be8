#include "server/service/config.h"

#include <toml++/toml.h>

#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace mculab::server {
namespace {

Error ConfigError(std::string_view origin, const std::string& what) {
  return MakeError(ErrorCode::kInvalidArgument, std::string(origin) + ": " + what);
}

// Reads an integer key in [min, max] into `out` when present.
template <typename T>
Status ReadInt(const toml::table& t, std::string_view key, std::int64_t min, std::int64_t max,
               std::string_view origin, T& out) {
  const toml::node* node = t.get(key);
  if (node == nullptr) return {};
  // is_integer() first: value<int64_t>() converts a float, and a large one does not fit.
  auto v = node->is_integer() ? node->value<std::int64_t>() : std::nullopt;
  if (!v) {
    return ConfigError(origin, std::string(key) + " must be an integer");
  }
  if (*v < min || *v > max) {
    return ConfigError(origin, std::string(key) + " must be between " + std::to_string(min) +
                                   " and " + std::to_string(max) + ", got " + std::to_string(*v));
  }
  out = static_cast<T>(*v);
  return {};
}

// tls_cert and tls_key (PEM files): both or neither.
Status ReadTls(const toml::table& t, std::string_view origin, LabConfig& c) {
  for (auto [key, out] : {std::pair{"tls_cert", &c.tls_cert}, std::pair{"tls_key", &c.tls_key}}) {
    const toml::node* node = t.get(key);
    if (node == nullptr) continue;
    auto v = node->value<std::string>();
    if (!node->is_string() || !v || v->empty()) {
      return ConfigError(origin, std::string(key) + " must be the path of a PEM file");
    }
    *out = *v;
  }
  if (c.tls_cert.empty() != c.tls_key.empty()) {
    return ConfigError(origin,
                       "tls_cert and tls_key go together: give both (PEM files) or neither");
  }
  return {};
}

// [notify]: the alerts' webhooks (server/service/alerts.h).
Status ReadNotify(const toml::table& t, std::string_view origin, LabConfig& c) {
  const toml::node* n = t.get("notify");
  if (n == nullptr) return {};
  const toml::table* nt = n->as_table();
  if (nt == nullptr) return ConfigError(origin, "notify must be a table ([notify])");
  for (const auto& [key, value] : *nt) {
    const std::string_view k = key.str();
    if (k != "webhooks" && k != "timeout_ms" && k != "max_attempts" && k != "poll_ms" &&
        k != "web_url" && k != "ca_file") {
      return ConfigError(origin, "unknown key 'notify." + std::string(k) +
                                     "' (known: webhooks, timeout_ms, max_attempts, poll_ms, "
                                     "web_url, ca_file)");
    }
  }
  if (const toml::node* w = nt->get("webhooks")) {
    const toml::array* a = w->as_array();
    if (a == nullptr || a->size() > 16) {
      return ConfigError(origin, "notify.webhooks must be a list of at most 16 URLs");
    }
    for (const toml::node& url : *a) {
      auto v = url.value<std::string>();
      if (!url.is_string() || !v || !(v->starts_with("http://") || v->starts_with("https://")) ||
          v->size() > 2048) {
        return ConfigError(origin, "notify.webhooks: each must be an http:// or https:// URL");
      }
      c.notify_webhooks.push_back(*v);
    }
  }
  if (Status s = ReadInt(*nt, "timeout_ms", 100, 600'000, origin, c.notify_timeout_ms); !s.ok())
    return s;
  if (Status s = ReadInt(*nt, "max_attempts", 1, 100, origin, c.notify_max_attempts); !s.ok())
    return s;
  if (Status s = ReadInt(*nt, "poll_ms", 50, 3'600'000, origin, c.notify_poll_ms); !s.ok())
    return s;
  if (const toml::node* u = nt->get("web_url")) {
    auto v = u->value<std::string>();
    if (!u->is_string() || !v || !(v->starts_with("http://") || v->starts_with("https://"))) {
      return ConfigError(origin,
                         "notify.web_url must be the web page's http:// or https:// address");
    }
    c.notify_web_url = *v;
  }
  if (const toml::node* f = nt->get("ca_file")) {
    auto v = f->value<std::string>();
    if (!f->is_string() || !v || v->empty()) {
      return ConfigError(origin, "notify.ca_file must be the path of a PEM file");
    }
    c.notify_ca_file = *v;
  }
  return {};
}

// The HTTP and gRPC endpoints' caps; a per-user or per-address cap may not exceed its total.
Status ReadNetworkCaps(const toml::table& t, std::string_view origin, LabConfig& c) {
  constexpr std::int64_t kMany = 1'000'000;
  struct Key {
    const char* name;
    std::int64_t min, max;
    std::uint32_t* out;
  };
  const Key keys[] = {
      {"http_max_connections", 1, kMany, &c.http_max_connections},
      {"http_max_connections_per_address", 1, kMany, &c.http_max_connections_per_address},
      {"http_reserved_connections", 0, kMany, &c.http_reserved_connections},
      {"http_max_event_streams", 1, kMany, &c.http_max_event_streams},
      {"http_max_event_streams_per_user", 1, kMany, &c.http_max_event_streams_per_user},
      {"http_max_event_streams_per_address", 1, kMany, &c.http_max_event_streams_per_address},
      {"http_header_timeout_ms", 100, 3'600'000, &c.http_header_timeout_ms},
      {"http_idle_timeout_s", 1, 24 * 3600, &c.http_idle_timeout_s},
      {"http_write_timeout_s", 1, 24 * 3600, &c.http_write_timeout_s},
      {"grpc_max_concurrent_streams", 1, kMany, &c.grpc_max_concurrent_streams},
      // gRPC needs a few threads of its own besides the handlers.
      {"grpc_max_threads", 8, kMany, &c.grpc_max_threads},
      {"grpc_max_connections", 1, kMany, &c.grpc_max_connections},
      {"grpc_max_connections_per_address", 1, kMany, &c.grpc_max_connections_per_address},
      {"grpc_reserved_connections", 0, kMany, &c.grpc_reserved_connections},
      {"grpc_auth_timeout_ms", 100, 3'600'000, &c.grpc_auth_timeout_ms},
  };
  for (const Key& k : keys) {
    if (Status s = ReadInt(t, k.name, k.min, k.max, origin, *k.out); !s.ok()) return s;
  }
  if (Status s = ReadInt(t, "http_max_stream_pending_bytes", 4096, std::int64_t{1} << 30, origin,
                         c.http_max_stream_pending_bytes);
      !s.ok())
    return s;
  struct Part {
    const char* name;
    std::uint32_t value;
    const char* total_name;
    std::uint32_t total;
    bool below = false;  // strictly less than the total
  };
  // A reserve must leave general slots: it is a share of the total, not all of it.
  const Part parts[] = {
      {"http_max_connections_per_address", c.http_max_connections_per_address,
       "http_max_connections", c.http_max_connections},
      {"http_reserved_connections", c.http_reserved_connections, "http_max_connections",
       c.http_max_connections, true},
      {"grpc_max_connections_per_address", c.grpc_max_connections_per_address,
       "grpc_max_connections", c.grpc_max_connections},
      {"grpc_reserved_connections", c.grpc_reserved_connections, "grpc_max_connections",
       c.grpc_max_connections, true},
      {"http_max_event_streams_per_user", c.http_max_event_streams_per_user,
       "http_max_event_streams", c.http_max_event_streams},
      {"http_max_event_streams_per_address", c.http_max_event_streams_per_address,
       "http_max_event_streams", c.http_max_event_streams},
  };
  for (const Part& p : parts) {
    if (p.below ? p.value >= p.total : p.value > p.total) {
      return ConfigError(origin, std::string(p.name) + " (" + std::to_string(p.value) +
                                     (p.below ? ") must be less than " : ") cannot exceed ") +
                                     p.total_name + " (" + std::to_string(p.total) + ")");
    }
  }
  return {};
}

}  // namespace

Result<LabConfig> ParseLabConfig(std::string_view toml_text, std::string_view origin) {
  toml::table t;
  try {
    t = toml::parse(toml_text, origin);
  } catch (const toml::parse_error& e) {
    return ConfigError(origin, "line " + std::to_string(e.source().begin.line) + ": " +
                                   std::string(e.description()));
  }
  for (const auto& [key, value] : t) {
    const std::string_view k = key.str();
    if (k != "max_artifact_bytes" && k != "default_timeout_s" && k != "max_attempts" &&
        k != "heartbeat_ms" && k != "heartbeat_timeout_ms" && k != "reconnect_grace_s" &&
        k != "cancel_grace_ms" && k != "max_reservation_s" && k != "health" &&
        k != "pass_cycles_tolerance" && k != "tls_cert" && k != "tls_key" &&
        k != "max_user_artifact_bytes" && k != "max_user_artifacts" && k != "artifact_grace_s" &&
        k != "max_queued_jobs_per_user" && k != "max_boards_per_agent" &&
        k != "max_tags_per_board" && k != "upload_timeout_s" && k != "http_max_connections" &&
        k != "http_max_connections_per_address" && k != "http_reserved_connections" &&
        k != "http_max_event_streams" && k != "grpc_max_connections" &&
        k != "grpc_max_connections_per_address" && k != "grpc_reserved_connections" &&
        k != "grpc_auth_timeout_ms" && k != "http_max_event_streams_per_user" &&
        k != "http_max_event_streams_per_address" && k != "http_max_stream_pending_bytes" &&
        k != "http_header_timeout_ms" && k != "http_idle_timeout_s" &&
        k != "http_write_timeout_s" && k != "grpc_max_concurrent_streams" &&
        k != "grpc_max_threads" && k != "max_model_arena" && k != "approve_new_boards" &&
        k != "store" && k != "notify") {
      return ConfigError(origin, "unknown key '" + std::string(k) +
                                     "' (known: max_artifact_bytes, default_timeout_s, "
                                     "max_attempts, heartbeat_ms, heartbeat_timeout_ms, "
                                     "reconnect_grace_s, cancel_grace_ms, max_reservation_s, "
                                     "pass_cycles_tolerance, tls_cert, tls_key, "
                                     "max_user_artifact_bytes, max_user_artifacts, "
                                     "artifact_grace_s, max_queued_jobs_per_user, "
                                     "max_boards_per_agent, max_tags_per_board, "
                                     "upload_timeout_s, http_max_connections, "
                                     "http_max_connections_per_address, "
                                     "http_reserved_connections, http_max_event_streams, "
                                     "http_max_event_streams_per_user, "
                                     "http_max_event_streams_per_address, "
                                     "http_max_stream_pending_bytes, http_header_timeout_ms, "
                                     "http_idle_timeout_s, http_write_timeout_s, "
                                     "grpc_max_concurrent_streams, grpc_max_threads, "
                                     "grpc_max_connections, grpc_max_connections_per_address, "
                                     "grpc_reserved_connections, grpc_auth_timeout_ms, "
                                     "max_model_arena, approve_new_boards, store, [health], "
                                     "[notify])");
    }
  }
  LabConfig c;
  if (Status s =
          ReadInt(t, "max_artifact_bytes", 1, std::int64_t{1} << 40, origin, c.max_artifact_bytes);
      !s.ok())
    return s.error();
  if (Status s = ReadInt(t, "default_timeout_s", 1, 7 * 24 * 3600, origin, c.default_timeout_s);
      !s.ok())
    return s.error();
  if (Status s = ReadInt(t, "max_attempts", 1, 100, origin, c.max_attempts); !s.ok())
    return s.error();
  if (Status s = ReadInt(t, "heartbeat_ms", 100, 3'600'000, origin, c.heartbeat_ms); !s.ok())
    return s.error();
  if (Status s =
          ReadInt(t, "heartbeat_timeout_ms", 0, 24 * 3'600'000, origin, c.heartbeat_timeout_ms);
      !s.ok())
    return s.error();
  if (c.heartbeat_timeout_ms != 0 && c.heartbeat_timeout_ms <= c.heartbeat_ms) {
    return ConfigError(origin, "heartbeat_timeout_ms (" + std::to_string(c.heartbeat_timeout_ms) +
                                   ") must be longer than heartbeat_ms (" +
                                   std::to_string(c.heartbeat_ms) +
                                   "); use 0 for 3 x heartbeat_ms");
  }
  if (Status s = ReadInt(t, "reconnect_grace_s", 0, 24 * 3600, origin, c.reconnect_grace_s);
      !s.ok())
    return s.error();
  if (Status s = ReadInt(t, "cancel_grace_ms", 100, 3'600'000, origin, c.cancel_grace_ms); !s.ok())
    return s.error();
  if (Status s = ReadInt(t, "max_reservation_s", 1, 365 * 24 * 3600, origin, c.max_reservation_s);
      !s.ok())
    return s.error();
  if (Status s = ReadInt(t, "max_user_artifact_bytes", 1, std::int64_t{1} << 50, origin,
                         c.max_user_artifact_bytes);
      !s.ok())
    return s.error();
  if (Status s = ReadInt(t, "max_user_artifacts", 1, 10'000'000, origin, c.max_user_artifacts);
      !s.ok())
    return s.error();
  if (Status s = ReadInt(t, "artifact_grace_s", 60, 365 * 24 * 3600, origin, c.artifact_grace_s);
      !s.ok())
    return s.error();
  if (Status s =
          ReadInt(t, "max_queued_jobs_per_user", 1, 10'000'000, origin, c.max_queued_jobs_per_user);
      !s.ok())
    return s.error();
  if (Status s = ReadInt(t, "max_boards_per_agent", 1, 100'000, origin, c.max_boards_per_agent);
      !s.ok())
    return s.error();
  if (Status s = ReadInt(t, "max_tags_per_board", 0, 10'000, origin, c.max_tags_per_board); !s.ok())
    return s.error();
  if (Status s = ReadInt(t, "upload_timeout_s", 1, 24 * 3600, origin, c.upload_timeout_s); !s.ok())
    return s.error();
  if (Status s = ReadNetworkCaps(t, origin, c); !s.ok()) return s.error();
  if (Status s =
          ReadInt(t, "max_model_arena", 1024, std::int64_t{1} << 40, origin, c.max_model_arena);
      !s.ok())
    return s.error();
  if (const toml::node* n = t.get("approve_new_boards")) {
    if (!n->is_boolean()) return ConfigError(origin, "approve_new_boards must be true or false");
    c.approve_new_boards = *n->value<bool>();
  }
  if (const toml::node* n = t.get("store")) {
    auto v = n->value<std::string>();
    if (!n->is_string() || !v || v->empty()) {
      return ConfigError(origin,
                         "store must be a store URL: \"sqlite:PATH\" or \"postgresql://...\"");
    }
    c.store = *v;
  }
  if (const toml::node* h = t.get("health")) {
    const toml::table* ht = h->as_table();
    if (ht == nullptr) return ConfigError(origin, "health must be a table ([health])");
    for (const auto& [key, value] : *ht) {
      const std::string_view k = key.str();
      if (k != "checks" && k != "max_failures" && k != "tolerance" && k != "expected") {
        return ConfigError(origin, "unknown key 'health." + std::string(k) +
                                       "' (known: checks, max_failures, tolerance, expected)");
      }
    }
    if (const toml::node* n = ht->get("checks")) {
      if (!n->is_boolean()) return ConfigError(origin, "health.checks must be true or false");
      c.health_checks = *n->value<bool>();
    }
    if (Status s = ReadInt(*ht, "max_failures", 1, 100, origin, c.health_max_failures); !s.ok())
      return s.error();
    if (const toml::node* n = ht->get("tolerance")) {
      auto v = n->value<double>();
      if (!v || !(*v >= 0 && *v <= 1)) {  // NaN too
        return ConfigError(origin, "health.tolerance must be a number between 0 and 1");
      }
      c.health_tolerance = *v;
    }
    if (const toml::node* n = ht->get("expected")) {
      const toml::table* et = n->as_table();
      if (et == nullptr) {
        return ConfigError(origin, "health.expected must be a table of board kind = value");
      }
      for (const auto& [kind, value] : *et) {
        auto v = value.is_integer() ? value.value<std::int64_t>() : std::nullopt;
        if (!v || *v <= 0) {
          return ConfigError(
              origin, "health.expected." + std::string(kind.str()) + " must be a positive integer");
        }
        c.health_expected[std::string(kind.str())] = *v;
      }
    }
  }
  if (const toml::node* n = t.get("pass_cycles_tolerance"); n != nullptr) {
    auto v = n->value<double>();
    if (!v || !(*v >= 0 && *v <= 1)) {
      return ConfigError(origin,
                         "pass_cycles_tolerance must be a number between 0 and 1 (0.02 = 2%)");
    }
    c.pass_cycles_tolerance = *v;
  }
  if (Status s = ReadTls(t, origin, c); !s.ok()) return s.error();
  if (Status s = ReadNotify(t, origin, c); !s.ok()) return s.error();
  return c;
}

Result<LabConfig> LoadLabConfig(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) {
    return MakeError(ErrorCode::kNotFound, "cannot read config file " + path.string());
  }
  std::stringstream ss;
  ss << in.rdbuf();
  auto config = ParseLabConfig(ss.str(), path.string());
  if (!config.ok()) return config;
  // TLS files are relative to the config file's folder.
  for (std::filesystem::path* p : {&config->tls_cert, &config->tls_key, &config->notify_ca_file}) {
    if (!p->empty() && p->is_relative()) *p = path.parent_path() / *p;
  }
  return config;
}

}  // namespace mculab::server
