#include "server/http/router.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <array>
#include <charconv>
#include <cstdlib>
#include <exception>
#include <limits>

#include "common/lists.h"
#include "server/http/auth.h"
#include "server/http/event_stream.h"
#include "server/http/json_views.h"
#include "server/http/trend_api.h"
#include "server/wire/documents.h"

namespace mculab::server::http {
namespace {

using beast_http::field;
using beast_http::status;
using beast_http::verb;

constexpr std::size_t kMaxFilterChars = 256;
constexpr std::int64_t kMaxTimeMs = 8'640'000'000'000'000;  // the ECMAScript Date range
constexpr std::int64_t kMaxOffset = (std::int64_t{1} << 53) - 1;

struct SortName {
  std::string_view name;
  JobSortKey key;
};
constexpr std::array<SortName, 6> kSorts = {{{"id", JobSortKey::kId},
                                             {"created", JobSortKey::kCreated},
                                             {"state", JobSortKey::kState},
                                             {"op", JobSortKey::kOp},
                                             {"board", JobSortKey::kBoard},
                                             {"user", JobSortKey::kUser}}};

Error Invalid(std::string message) {
  return MakeError(ErrorCode::kInvalidArgument, std::move(message));
}

std::string StateNames() {
  std::string out;
  for (JobState s : kAllJobStates) out += (out.empty() ? "" : ", ") + std::string(JobStateName(s));
  return out;
}

// A job id in a path or a list: decimal digits only.
std::optional<JobId> ParseJobId(std::string_view text) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  JobId id = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || p != text.data() + text.size() || id < 0) return std::nullopt;
  return id;
}

Result<JobQuery> ParseJobQuery(const QueryParams& q) {
  JobQuery out;
  struct TextFilter {
    const char* name;
    std::string* into;
  };
  const TextFilter text[] = {
      {"user", &out.user},     {"board", &out.board},          {"kind", &out.kind},
      {"op", &out.op},         {"label", &out.label_contains}, {"model", &out.model},
      {"branch", &out.branch}, {"commit", &out.commit}};
  for (const auto& [name, into] : text) {
    auto v = q.Get(name);
    if (!v) continue;
    if (v->size() > kMaxFilterChars) {
      return Invalid(fmt::format("{} is longer than {} characters", name, kMaxFilterChars));
    }
    *into = std::move(*v);
  }
  if (auto states = q.Get("state")) {
    for (std::string& s : SplitList(*states)) {
      if (!ParseJobState(s)) {
        return Invalid(fmt::format("state must be job states separated by commas ({}), got \"{}\"",
                                   StateNames(), s));
      }
      out.states.push_back(std::move(s));
    }
  }
  auto from = q.OptionalInt("from", -kMaxTimeMs, kMaxTimeMs);
  if (!from.ok()) return from.error();
  out.created_from = *from;
  auto to = q.OptionalInt("to", -kMaxTimeMs, kMaxTimeMs);
  if (!to.ok()) return to.error();
  out.created_to = *to;
  if (auto sort = q.Get("sort")) {
    auto it = std::find_if(kSorts.begin(), kSorts.end(),
                           [&](const SortName& s) { return s.name == *sort; });
    if (it == kSorts.end()) {
      return Invalid(fmt::format(
          "sort must be one of id, created, state, op, board, user, got \"{}\"", *sort));
    }
    out.sort = it->key;
  }
  if (auto order = q.Get("order")) {
    if (*order != "asc" && *order != "desc") {
      return Invalid(fmt::format("order must be asc or desc, got \"{}\"", *order));
    }
    out.ascending = *order == "asc";
  }
  auto limit = q.Int("limit", 1, kMaxJobsPerPage, 50);
  if (!limit.ok()) return limit.error();
  out.limit = static_cast<std::uint32_t>(*limit);
  auto offset = q.Int("offset", 0, kMaxOffset, 0);
  if (!offset.ok()) return offset.error();
  out.offset = static_cast<std::uint64_t>(*offset);
  auto before = q.Int("before", 0, kMaxOffset, 0);
  if (!before.ok()) return before.error();
  out.before_id = static_cast<JobId>(*before);
  return out;
}

Result<std::vector<JobId>> ParseCompareIds(const QueryParams& q) {
  const std::string raw = q.Get("jobs").value_or("");
  const std::vector<std::string> parts = SplitList(raw);
  if (parts.size() < kMinComparedJobs || parts.size() > kMaxComparedJobs) {
    return Invalid(fmt::format("jobs must list {} to {} job ids separated by commas, got \"{}\"",
                               kMinComparedJobs, kMaxComparedJobs, raw));
  }
  std::vector<JobId> ids;
  for (const std::string& p : parts) {
    auto id = ParseJobId(p);
    if (!id) return Invalid(fmt::format("jobs: \"{}\" is not a job id", p));
    ids.push_back(*id);
  }
  return ids;
}

// A CSV file to save: text/csv, named by Content-Disposition.
Response CsvResponse(std::string body, const std::string& file_name, const Request& req) {
  Response res{status::ok, req.version()};
  res.set(field::content_type, "text/csv; charset=utf-8");
  res.set(field::content_disposition, "attachment; filename=\"" + file_name + "\"");
  res.set(field::cache_control, "no-store");
  AddSecurityHeaders(res);
  res.keep_alive(req.keep_alive());
  res.body() = std::move(body);
  res.prepare_payload();
  return res;
}

Response JsonResponse(status st, const Json& body, const Request& req) {
  Response res{st, req.version()};
  res.set(field::content_type, "application/json");
  res.set(field::cache_control, "no-store");
  AddSecurityHeaders(res);
  res.keep_alive(req.keep_alive());
  res.body() = Dump(body);
  res.prepare_payload();
  return res;
}

Response ErrorOf(const Error& e, const Request& req) {
  return ErrorResponse(StatusOf(e.code), e.message, req.version(), req.keep_alive());
}

}  // namespace

void AddSecurityHeaders(Response& res) {
  res.set("Content-Security-Policy", kContentSecurityPolicy);
  res.set("X-Content-Type-Options", "nosniff");
  res.set("Referrer-Policy", "no-referrer");
  res.set(field::x_frame_options, "DENY");
}

status StatusOf(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kFailedPrecondition:
      return status::bad_request;
    case ErrorCode::kNotFound:
      return status::not_found;
    case ErrorCode::kUnauthenticated:
      return status::unauthorized;
    case ErrorCode::kPermissionDenied:
      return status::forbidden;
    case ErrorCode::kResourceExhausted:
      return status::too_many_requests;
    case ErrorCode::kUnavailable:
    case ErrorCode::kCancelled:
      return status::service_unavailable;
    case ErrorCode::kDeadlineExceeded:
      return status::gateway_timeout;
    case ErrorCode::kAlreadyExists:
      return status::conflict;
    case ErrorCode::kDataLoss:
    case ErrorCode::kInternal:
      break;
  }
  return status::internal_server_error;
}

Response ErrorResponse(status st, const std::string& message, unsigned version, bool keep_alive) {
  Response res{st, version};
  res.set(field::content_type, "application/json");
  res.set(field::cache_control, "no-store");
  AddSecurityHeaders(res);
  res.keep_alive(keep_alive);
  res.body() = Dump(ErrorJson(message));
  res.prepare_payload();
  return res;
}

Router::Router(Lab& lab, Store& store, Clock& clock, RouterOptions options)
    : lab_(lab),
      store_(store),
      clock_(clock),
      queries_(lab, store),
      static_files_(std::move(options.web_root)) {}

bool Router::Authenticated(const Request& request, std::string_view peer) const {
  return AuthenticateRequest(request, peer, lab_.accounts()).ok();
}

void Router::ObserveIngest() const {
  auto n = store_.SamplesStored();
  if (n.ok()) ingest_.Observe(clock_.NowMs(), *n);
}

Router::Reply Router::Handle(const Request& req, std::string_view peer) const {
  Reply reply;
  try {
    if (req.method() != verb::get && req.method() != verb::head) {
      reply.response = ErrorResponse(
          status::method_not_allowed,
          fmt::format("{} is not allowed: this server only answers GET and HEAD",
                      std::string_view(req.method_string().data(), req.method_string().size())),
          req.version(), req.keep_alive());
      reply.response.set(field::allow, "GET, HEAD");
    } else if (auto target =
                   ParseTarget(std::string_view(req.target().data(), req.target().size()));
               !target.ok()) {
      reply.response = ErrorOf(target.error(), req);
    } else if (target->path == "/healthz") {
      Json ok;
      ok["ok"] = true;
      reply.response = JsonResponse(status::ok, ok, req);
    } else if (target->path == "/metrics" || target->path.starts_with("/api/")) {
      auto caller = AuthenticateRequest(req, peer, lab_.accounts());
      if (!caller.ok()) {
        reply.response = ErrorOf(caller.error(), req);
        if (caller.error().code == ErrorCode::kUnauthenticated) {
          reply.response.set(field::www_authenticate, "Bearer realm=\"mculab\"");
        }
      } else {
        reply = Api(req, target->path, target->query, *caller);
      }
    } else {
      auto file = static_files_.Read(target->path);
      if (!file.ok()) {
        reply.response = ErrorOf(file.error(), req);
      } else {
        Response res{status::ok, req.version()};
        res.set(field::content_type, file->content_type);
        res.set(field::cache_control, "no-cache");
        AddSecurityHeaders(res);
        res.keep_alive(req.keep_alive());
        res.body() = std::move(file->body);
        res.prepare_payload();
        reply.response = std::move(res);
      }
    }
  } catch (const std::exception& e) {
    spdlog::error("http: {} {}: {}",
                  std::string_view(req.method_string().data(), req.method_string().size()),
                  std::string_view(req.target().data(), req.target().size()), e.what());
    reply = Reply{};
    reply.response =
        ErrorResponse(status::internal_server_error, std::string("internal error: ") + e.what(),
                      req.version(), req.keep_alive());
  }
  if (req.method() == verb::head && !reply.feed) {
    // The same headers, Content-Length included, without the body.
    const auto length = reply.response.body().size();
    reply.response.body().clear();
    reply.response.content_length(length);
  }
  return reply;
}

Router::Reply Router::Api(const Request& req, const std::string& path, const QueryParams& q,
                          const Caller& caller) const {
  Reply reply;
  auto json = [&](auto result, auto render) {
    if (!result.ok()) {
      reply.response = ErrorOf(result.error(), req);
    } else {
      reply.response = JsonResponse(status::ok, render(*result), req);
    }
  };
  // The lab's host boards label the jobs that ran (or will run) on them "host".
  auto host_boards = [&] {
    auto boards = queries_.ListBoards(caller);
    return boards.ok() ? HostBoardsOf(*boards) : HostBoards{};
  };
  constexpr std::string_view kJobs = "/api/v1/jobs/";
  if (path == "/api/v1/jobs") {
    auto query = ParseJobQuery(q);
    if (!query.ok()) {
      reply.response = ErrorOf(query.error(), req);
      return reply;
    }
    json(queries_.ListJobs(caller, *query),
         [&](const JobPage& p) { return wire::JobListDocument(p, *query); });
  } else if (path.starts_with(kJobs)) {
    std::string_view rest = std::string_view(path).substr(kJobs.size());
    const std::size_t slash = rest.find('/');
    const std::string_view id_text = rest.substr(0, slash);
    const std::string_view sub =
        slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
    const bool digits = !id_text.empty() && std::all_of(id_text.begin(), id_text.end(), [](char c) {
      return c >= '0' && c <= '9';
    });
    if (!digits || (!sub.empty() && sub != "/samples" && sub != "/export.csv")) {
      reply.response = ErrorOf(MakeError(ErrorCode::kNotFound, "no route " + path), req);
      return reply;
    }
    auto id = ParseJobId(id_text);
    if (!id) {
      reply.response = ErrorOf(
          MakeError(ErrorCode::kNotFound, fmt::format("job {} does not exist", id_text)), req);
      return reply;
    }
    if (sub.empty()) {
      // ?samples=1: every raw sample too, as `mculab show --json` prints them.
      auto samples = q.Int("samples", 0, 1, 0);
      if (!samples.ok()) {
        reply.response = ErrorOf(samples.error(), req);
        return reply;
      }
      json(queries_.GetJobResults(caller, *id, *samples == 1), wire::JobDocument);
    } else if (sub == "/export.csv") {
      // The CSV `mculab export` writes (?format=csv, the default, or ops-csv), for a succeeded
      // job: the page's "Download CSV".
      const std::string format = q.Get("format").value_or("csv");
      if (format != "csv" && format != "ops-csv") {
        reply.response =
            ErrorOf(MakeError(ErrorCode::kInvalidArgument,
                              fmt::format("format must be csv or ops-csv, got \"{}\"", format)),
                    req);
        return reply;
      }
      auto results = queries_.GetJobResults(caller, *id, false);
      if (!results.ok()) {
        reply.response = ErrorOf(results.error(), req);
      } else if (results->job.state != JobState::kSucceeded) {
        reply.response = ErrorOf(
            MakeError(ErrorCode::kFailedPrecondition,
                      fmt::format("job {} is {}; only a succeeded job has results to export", *id,
                                  JobStateName(results->job.state))),
            req);
      } else {
        reply.response = CsvResponse(wire::JobCsv(*results, format == "ops-csv"),
                                     fmt::format("mculab-job-{}.csv", *id), req);
      }
    } else {
      SamplesRequest r;
      auto c = q.Int("case", 0, 1'000'000'000, 0);
      auto points = q.Int("max_points", 10, 100'000, 2000);
      auto bins = q.Int("bins", 0, 200, 0);
      for (const auto* v : {&c, &points, &bins}) {
        if (!v->ok()) {
          reply.response = ErrorOf(v->error(), req);
          return reply;
        }
      }
      r.case_index = static_cast<std::uint32_t>(*c);
      r.max_points = static_cast<std::size_t>(*points);
      r.bins = static_cast<std::size_t>(*bins);
      json(queries_.GetCaseSamples(caller, *id, r), CaseSamplesJson);
    }
  } else if (path == "/api/v1/compare") {
    auto ids = ParseCompareIds(q);
    if (!ids.ok()) {
      reply.response = ErrorOf(ids.error(), req);
      return reply;
    }
    // max_cv: a percentage ("5" or "5%"); absent or 0: each kind's default.
    double max_cv = 0;
    if (auto text = q.Get("max_cv"); text && !text->empty()) {
      std::string t = *text;
      if (t.back() == '%') t.pop_back();
      char* end = nullptr;
      max_cv = std::strtod(t.c_str(), &end);
      if (t.empty() || end != t.c_str() + t.size()) {
        reply.response = ErrorOf(
            MakeError(ErrorCode::kInvalidArgument,
                      fmt::format("max_cv: \"{}\" is not a percentage (such as 5 or 5%)", *text)),
            req);
        return reply;
      }
    }
    json(queries_.Compare(caller, *ids, max_cv), wire::ComparisonDocument);
  } else if (path == "/api/v1/series") {
    auto request = ParseTrendRequest(q);
    if (!request.ok()) {
      reply.response = ErrorOf(request.error(), req);
      return reply;
    }
    json(queries_.GetTrend(caller, *request), wire::TrendDocument);
  } else if (path == "/api/v1/changes") {
    auto query = ParseJobQuery(q);
    auto scan = q.Int("scan", 1, kMaxChangedScan, 200);
    if (!query.ok() || !scan.ok()) {
      reply.response = ErrorOf(!query.ok() ? query.error() : scan.error(), req);
      return reply;
    }
    json(queries_.ListChangedJobs(caller, *query, static_cast<std::uint32_t>(*scan)),
         [&](const ChangedJobs& c) { return ChangedJobsJson(c, host_boards()); });
  } else if (path == "/api/v1/boards") {
    json(queries_.ListBoards(caller), [](const std::vector<BoardView>& boards) {
      Json list = Json::array();
      for (const BoardView& b : boards) list.push_back(wire::BoardDocument(b));
      Json j;
      j["boards"] = std::move(list);
      return j;
    });
  } else if (path == "/api/v1/events") {
    Response res{status::ok, req.version()};
    res.set(field::content_type, "text/event-stream");
    res.set(field::cache_control, "no-store");
    AddSecurityHeaders(res);
    res.keep_alive(req.keep_alive());
    res.body() = std::string(kEventStreamStart);
    reply.response = std::move(res);
    // ?job=ID: the stream also carries that job's per-iteration values as they are stored.
    auto job = q.Int("job", 0, std::numeric_limits<std::int64_t>::max(), 0);
    if (!job.ok()) {
      reply.response = ErrorOf(job.error(), req);
      return reply;
    }
    if (req.method() == verb::get) {
      // Ends if the caller's token is revoked.
      reply.feed = lab_.Subscribe(caller, LabFeed::kDefaultCapacity, static_cast<JobId>(*job));
      reply.user = caller.user;
    }
  } else if (path == "/metrics") {
    auto figures = queries_.Figures(caller);
    if (!figures.ok()) {
      reply.response = ErrorOf(figures.error(), req);
    } else {
      ingest_.Observe(clock_.NowMs(), figures->samples_stored);
      Response res{status::ok, req.version()};
      res.set(field::content_type, kPrometheusContentType);
      res.set(field::cache_control, "no-store");
      AddSecurityHeaders(res);
      res.keep_alive(req.keep_alive());
      res.body() = PrometheusText(*figures, ingest_.Rate());
      res.prepare_payload();
      reply.response = std::move(res);
    }
  } else {
    reply.response = ErrorOf(MakeError(ErrorCode::kNotFound, "no route " + path), req);
  }
  return reply;
}

}  // namespace mculab::server::http
