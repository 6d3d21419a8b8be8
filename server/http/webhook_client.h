// PostJson: one HTTP/1.1 POST of a JSON body to a webhook URL (http:// or https://, the server's
// [notify] webhooks), with a deadline on the whole exchange. HTTPS verifies the server's
// certificate and host name against the system's trust store, or `ca_file` when given. A 2xx
// status is success; anything else is an error naming the URL's host and what happened (the
// body is never echoed: it may hold a token of the chat service).
// Thread-safety: a free function; any thread.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"

namespace mculab::server {

struct WebhookUrl {
  bool tls = false;
  std::string host;
  std::uint16_t port = 0;
  std::string path;  // "/..." with its query
};

// "https://hooks.example:8443/a/b?c" -> {tls, "hooks.example", 8443, "/a/b?c"}. kInvalidArgument
// for another scheme, no host, a bad port, or spaces and control characters.
Result<WebhookUrl> ParseWebhookUrl(const std::string& url);

Status PostJson(const std::string& url, const std::string& body, std::uint32_t timeout_ms,
                const std::string& ca_file = "");

}  // namespace mculab::server
