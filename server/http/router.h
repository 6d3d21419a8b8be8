// Router: every HTTP route of mculab-server (docs/http-api.md) as a plain function of the request,
// in the style of Beast's handle_request examples, so routes are tested without sockets:
//   GET /healthz                 public
//   GET /api/v1/...              the JSON API (caller from auth.h)
//   GET /metrics                 Prometheus text (caller from auth.h)
//   GET /...                     the web page's static files (no token; they hold no lab data)
// Every response carries the security headers (AddSecurityHeaders). Errors are JSON
// {"error": "..."} with the status of StatusOf(). The router only reads: queries go to
// LabQueries, live events to a Lab feed.
// Thread-safety: Handle may be called from any number of threads at once.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "common/result.h"
#include "server/http/message.h"
#include "server/http/metrics.h"
#include "server/http/params.h"
#include "server/http/static_files.h"
#include "server/service/clock.h"
#include "server/service/lab.h"
#include "server/service/queries.h"
#include "server/service/store.h"

namespace mculab::server::http {

inline constexpr const char* kContentSecurityPolicy =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

// The headers of docs/http-api.md that every response carries (page, API, errors, events).
void AddSecurityHeaders(Response& response);

// The one mapping from error codes to HTTP statuses.
beast_http::status StatusOf(ErrorCode code);

// A JSON error response, with the security headers and Cache-Control: no-store.
Response ErrorResponse(beast_http::status status, const std::string& message, unsigned version,
                       bool keep_alive);

struct RouterOptions {
  std::filesystem::path web_root;  // empty: no page, only the API
};

class Router {
 public:
  Router(Lab& lab, Store& store, Clock& clock, RouterOptions options);

  struct Reply {
    Response response;
    // GET /api/v1/events: `response` is the head of the stream (its headers and first bytes),
    // and `feed` is subscribed to the Lab; the transport keeps the connection open and writes
    // the feed's events after the head. Otherwise null.
    std::shared_ptr<LabFeed> feed;
    // Who opened the event stream (the transport caps streams per user).
    std::string user;
  };
  // `peer` is the client's address, for logs.
  Reply Handle(const Request& request, std::string_view peer = {}) const;

  // Whether the request carries a valid user token (the transport keeps some connection slots
  // for such requests).
  bool Authenticated(const Request& request, std::string_view peer) const;

  // Takes a reading of the store's sample counter for mculab_ingest_samples_per_second (the
  // transport calls this once a second; every scrape also does).
  void ObserveIngest() const;

  const StaticFiles& static_files() const { return static_files_; }

 private:
  Reply Api(const Request& request, const std::string& path, const QueryParams& query,
            const Caller& caller) const;

  Lab& lab_;
  Store& store_;
  Clock& clock_;
  mutable LabQueries queries_;
  StaticFiles static_files_;
  mutable IngestMeter ingest_;
};

}  // namespace mculab::server::http
