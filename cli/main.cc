// mculab: the command-line client of a mculab lab (boards, submit, jobs, show, export, cancel).
// Errors are one line on stderr and a non-zero exit code: 1 for a failed request or job, 2 for
// bad usage or input.
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/client_config.h"
#include "cli/custom_submit.h"
#include "cli/duration.h"
#include "cli/format.h"
#include "cli/model_submit.h"
#include "cli/profile_format.h"
#include "cli/trend_format.h"
#include "common/csv_cases.h"
#include "common/op_catalog.h"
#include "common/tflite_model.h"
#include "lab.grpc.pb.h"
#include "proto/json/documents.h"

extern char** environ;

namespace mculab::cli {
namespace {

namespace v1 = mculab::v1;

constexpr size_t kChunk = 64 * 1024;

struct UsageError {
  std::string message;
};

std::map<std::string, std::string> Environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}

class Client {
 public:
  explicit Client(ClientConfig cfg) : cfg_(std::move(cfg)) {
    std::shared_ptr<grpc::ChannelCredentials> creds;
    if (!cfg_.ca_file.empty()) {
      std::ifstream in(cfg_.ca_file);
      if (!in) throw UsageError{"cannot read CA file " + cfg_.ca_file};
      std::stringstream ss;
      ss << in.rdbuf();
      grpc::SslCredentialsOptions opts;
      opts.pem_root_certs = ss.str();
      creds = grpc::SslCredentials(opts);
    } else {
      creds = grpc::InsecureChannelCredentials();
    }
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(64 * 1024 * 1024);
    stub_ = v1::Lab::NewStub(grpc::CreateCustomChannel(cfg_.server, creds, args));
  }

  std::unique_ptr<grpc::ClientContext> Context(int timeout_s = 30) {
    auto ctx = std::make_unique<grpc::ClientContext>();
    if (timeout_s > 0)
      ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(timeout_s));
    if (!cfg_.token.empty()) ctx->AddMetadata("authorization", "Bearer " + cfg_.token);
    return ctx;
  }

  // One line naming what went wrong and what to do.
  [[noreturn]] void Fail(const grpc::Status& s, const std::string& what) {
    std::string msg;
    switch (s.error_code()) {
      case grpc::StatusCode::UNAVAILABLE:
        if (IsTransportFailure(s.error_message())) {
          msg = "cannot reach mculab-server at " + cfg_.server + " (from " + cfg_.source +
                "): " + s.error_message() + "; " + UnavailableHint(s.error_message());
        } else {  // the server answered: its reason is the message
          msg =
              what + ": mculab-server at " + cfg_.server + " is unavailable: " + s.error_message();
        }
        break;
      case grpc::StatusCode::DEADLINE_EXCEEDED:
        msg = what + ": the server at " + cfg_.server + " did not answer in time";
        break;
      case grpc::StatusCode::UNAUTHENTICATED:
        msg = "no valid token: " + what + ": " + s.error_message() +
              "; ask an admin for one (`mculab-server admin user add`) and pass it with --token, "
              "MCULAB_TOKEN or `token = \"...\"` in ~/.config/mculab/config.toml";
        break;
      case grpc::StatusCode::PERMISSION_DENIED:
        msg = what + ": " + s.error_message();
        break;
      default:
        msg = what + ": " + s.error_message();
    }
    std::cerr << "mculab: error: " << msg << "\n";
    std::exit(1);
  }

  // What to check when the server cannot be reached: TLS trouble, or whether it runs.
  std::string UnavailableHint(const std::string& message) const {
    const bool tls_trouble = message.find("SSL") != std::string::npos ||
                             message.find("ssl") != std::string::npos ||
                             message.find("handshake") != std::string::npos ||
                             message.find("CERTIFICATE") != std::string::npos;
    if (!cfg_.ca_file.empty() && tls_trouble) {
      return "the TLS handshake failed: is the server's certificate signed by the CA in " +
             cfg_.ca_file + " (--ca) and issued for the host name in " + cfg_.server + "?";
    }
    if (cfg_.ca_file.empty()) {
      return "is it running? (./deploy/quickstart.sh starts a lab); if the server uses TLS, "
             "pass its CA certificate with --ca";
    }
    return "is it running, and does it use TLS (tls_cert in its config)?";
  }

  v1::Lab::Stub& stub() { return *stub_; }
  const ClientConfig& config() const { return cfg_; }

 private:
  ClientConfig cfg_;
  std::unique_ptr<v1::Lab::Stub> stub_;
};

std::string ReadFile(const std::string& path, size_t limit) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError{"cannot open " + path};
  in.seekg(0, std::ios::end);
  const auto size = static_cast<size_t>(in.tellg());
  if (size > limit)
    throw UsageError{path + " is " + std::to_string(size) + " bytes; the limit is " +
                     std::to_string(limit)};
  in.seekg(0);
  std::string data(size, '\0');
  in.read(data.data(), static_cast<std::streamsize>(size));
  return data;
}

v1::ArtifactRef Upload(Client& c, const std::string& name, const std::string& data) {
  auto ctx = c.Context(120);
  v1::ArtifactRef ref;
  auto writer = c.stub().UploadArtifact(ctx.get(), &ref);
  size_t off = 0;
  do {
    v1::ArtifactChunk chunk;
    if (off == 0) {
      chunk.set_name(name);
      chunk.set_total_size(data.size());
    }
    const size_t n = std::min(kChunk, data.size() - off);
    chunk.set_data(data.substr(off, n));
    off += n;
    if (!writer->Write(chunk)) break;
  } while (off < data.size());
  writer->WritesDone();
  grpc::Status s = writer->Finish();
  if (!s.ok()) c.Fail(s, "uploading " + name);
  return ref;
}

bool IsFinal(const std::string& state) {
  return state == "succeeded" || state == "failed" || state == "cancelled" || state == "timed_out";
}

v1::Results GetResults(Client& c, uint64_t id, bool samples) {
  v1::GetResultsRequest req;
  req.set_id(id);
  req.set_include_samples(samples);
  v1::Results res;
  auto ctx = c.Context();
  grpc::Status s = c.stub().GetResults(ctx.get(), req, &res);
  if (!s.ok()) c.Fail(s, "job " + std::to_string(id));
  return res;
}

// Follows a job until it ends; returns its final state.
std::string Watch(Client& c, uint64_t id, bool quiet) {
  const bool tty = isatty(STDERR_FILENO);
  v1::WatchJobRequest req;
  req.set_id(id);
  auto ctx = c.Context(0);
  auto reader = c.stub().WatchJob(ctx.get(), req);
  v1::JobEvent ev;
  std::string last_state, last_line, final_state;
  while (reader->Read(&ev)) {
    std::string line = ev.state();
    if (!ev.board().empty()) line += " on " + ev.board();
    if (ev.progress_total() > 0 && ev.state() == "running")
      line += " " + ProgressBar(ev.progress_done(), ev.progress_total());
    if (!ev.message().empty() && IsFinal(ev.state())) line += ": " + ev.message();
    if (!quiet && line != last_line) {
      if (tty) {
        std::cerr << "\r\033[K"
                  << "job " << id << " " << line << std::flush;
        if (ev.state() != last_state && !last_state.empty() && ev.state() != "running")
          std::cerr << "";
      } else if (ev.state() != last_state || IsFinal(ev.state())) {
        std::cerr << "job " << id << " " << line << "\n";
      }
    }
    last_line = line;
    last_state = ev.state();
    if (IsFinal(ev.state())) {
      final_state = ev.state();
      break;
    }
  }
  if (!quiet && tty) std::cerr << "\n";
  if (final_state.empty()) {
    ctx->TryCancel();
    grpc::Status s = reader->Finish();
    if (!s.ok() && s.error_code() != grpc::StatusCode::CANCELLED)
      c.Fail(s, "watching job " + std::to_string(id));
    std::cerr << "mculab: error: the server closed the watch of job " << id
              << " before it ended; `mculab show " << id << "` shows where it is\n";
    std::exit(1);
  }
  ctx->TryCancel();
  reader->Finish();
  return final_state;
}

int CmdBoards(Client& c, bool json) {
  v1::ListBoardsReply rep;
  auto ctx = c.Context();
  grpc::Status s = c.stub().ListBoards(ctx.get(), v1::ListBoardsRequest{}, &rep);
  if (!s.ok()) c.Fail(s, "listing boards");
  if (json) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& b : rep.boards()) out.push_back(BoardDocument(b));
    std::cout << out.dump(2) << "\n";
  } else if (rep.boards_size() == 0) {
    std::cout << "no boards registered: start an agent (mculab-agent --config FILE)\n";
  } else {
    std::cout << RenderBoards(rep);
  }
  return 0;
}

// Streams a file to UploadArtifact in chunks, with progress on a terminal for files over 1 MiB.
// The server enforces its size limit and says so (RESOURCE_EXHAUSTED) before the whole file went.
v1::ArtifactRef UploadFile(Client& c, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError{"cannot open " + path};
  in.seekg(0, std::ios::end);
  const auto total = static_cast<uint64_t>(in.tellg());
  in.seekg(0);
  const std::string name = std::filesystem::path(path).filename().string();
  const bool progress = total > (1u << 20) && isatty(STDERR_FILENO);
  auto ctx = c.Context(600);
  v1::ArtifactRef ref;
  auto writer = c.stub().UploadArtifact(ctx.get(), &ref);
  std::string buf(256 * 1024, '\0');
  uint64_t sent = 0;
  bool first = true;
  while (first || sent < total) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto n = static_cast<size_t>(in.gcount());
    if (n == 0 && !first) break;
    v1::ArtifactChunk chunk;
    if (first) {
      chunk.set_name(name);
      chunk.set_total_size(total);
    }
    first = false;
    chunk.set_data(buf.data(), n);
    if (!writer->Write(chunk)) break;  // the server stopped reading: Finish says why
    sent += n;
    if (progress) std::cerr << "\r\033[K" << cli::UploadProgress(name, sent, total) << std::flush;
    if (n == 0) break;
  }
  if (progress) std::cerr << "\n";
  writer->WritesDone();
  grpc::Status s = writer->Finish();
  if (!s.ok()) c.Fail(s, "uploading " + path);
  return ref;
}

struct SubmitOptions {
  std::string kind, board, op, cases, label, priority, events, firmware, blob, model, input;
  std::vector<std::string> tags;  // --tag KEY=VALUE, repeatable
  unsigned iterations = 20, warmup = 2, timeout_s = 0;
  bool wait = false, json = false;
};

int CmdSubmit(Client& c, const SubmitOptions& o) {
  if (o.kind.empty() && o.board.empty()) throw UsageError{"give --kind KIND or --board NAME"};
  v1::SubmitJobRequest req;
  for (const std::string& t : o.tags) {
    const cli::ParsedTag tag = cli::ParseTag(t);
    if (!tag.error.empty()) throw UsageError{tag.error};
    (*req.mutable_tags())[tag.key] = tag.value;
  }
  if (!o.input.empty() && o.model.empty())
    throw UsageError{"--input is the input of a model: give --model FILE.tflite too"};
  if (!o.model.empty()) {
    // A .tflite model on the runner's own interpreter: the model (and input) go up as one blob.
    if (!o.firmware.empty() || !o.blob.empty() || (!o.op.empty() && o.op != kModelOp))
      throw UsageError{
          "--model runs the model on the lab's own runner; drop --op, --firmware "
          "and --blob"};
    if (!o.cases.empty()) throw UsageError{"--model runs one case; drop --cases"};
    auto blob = cli::ReadModelBlob(o.model, o.input);
    if (!blob.ok()) throw UsageError{blob.error().message};
    const std::string name = std::filesystem::path(o.model).filename().string();
    req.set_blob_artifact(Upload(c, name, std::string(blob->begin(), blob->end())).sha256());
    req.set_op(kModelOp);
    req.add_cases()->set_id(0);
  } else if (!o.firmware.empty()) {
    // Bring your own runtime: the runner (and blob) go up as artifacts, the job names their hashes.
    if (!o.op.empty() && o.op != "custom")
      throw UsageError{"--firmware runs your runner's own workload; drop --op " + o.op};
    if (Status st = cli::CheckFirmwareFile(o.firmware); !st.ok())
      throw UsageError{st.error().message};
    if (!o.cases.empty()) {
      const std::string csv = ReadFile(o.cases, kMaxCsvBytes);
      auto ids = cli::ParseCaseIdsCsv(csv, o.cases);
      if (!ids.ok()) throw UsageError{ids.error().message};
      for (int64_t id : *ids) req.add_cases()->set_id(id);
      req.set_cases_artifact(
          Upload(c, std::filesystem::path(o.cases).filename().string(), csv).sha256());
    }
    req.set_firmware_artifact(UploadFile(c, o.firmware).sha256());
    if (!o.blob.empty()) req.set_blob_artifact(UploadFile(c, o.blob).sha256());
    req.set_op("custom");
  } else {
    if (!o.blob.empty())
      throw UsageError{"--blob needs --firmware (your runner, which reads the blob)"};
    if (o.op.empty())
      throw UsageError{"give --op OP (built-in ops: " + OpNames() + ") or --firmware runner.elf"};
    if (o.cases.empty()) throw UsageError{"--op needs --cases CSV (the parameter sweep)"};
    const OpInfo* op = FindOp(o.op);
    if (!op) throw UsageError{"unknown op '" + o.op + "'; built-in ops: " + OpNames()};
    const std::string csv = ReadFile(o.cases, kMaxCsvBytes);
    auto table = ParseCasesCsv(csv, *op, o.cases);
    if (!table.ok()) throw UsageError{table.error().message};
    for (const auto& w : table->warnings)
      std::cerr << "mculab: warning: " << o.cases << ": " << w << "\n";
    const std::string name = std::filesystem::path(o.cases).filename().string();
    v1::ArtifactRef ref = Upload(c, name, csv);
    req.set_op(o.op);
    req.set_cases_artifact(ref.sha256());
    for (const auto& row : table->rows) {
      auto* cs = req.add_cases();
      cs->set_id(row.id);
      for (int32_t p : row.params) cs->add_params(p);
    }
  }
  req.set_kind(o.kind);
  req.set_board(o.board);
  req.set_iterations(o.iterations);
  req.set_warmup(o.warmup);
  req.set_label(o.label);
  req.set_timeout_s(o.timeout_s);
  req.set_priority(o.priority);
  for (std::size_t start = 0; start < o.events.size();) {
    std::size_t end = o.events.find(',', start);
    if (end == std::string::npos) end = o.events.size();
    if (end > start) req.add_events(o.events.substr(start, end - start));
    start = end + 1;
  }
  v1::SubmitJobReply rep;
  auto ctx = c.Context();
  grpc::Status s = c.stub().SubmitJob(ctx.get(), req, &rep);
  if (!s.ok()) c.Fail(s, "submit");
  // Position 0: the job went to a board at once; otherwise why it waits (WaitText).
  std::string queue =
      rep.wait().position() > 0
          ? WaitText(rep.wait(), std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count())
          : std::string("on a board now");
  if (!o.priority.empty() && o.priority != "normal") queue += "; priority " + o.priority;
  if (!o.wait) {
    if (o.json) {
      std::cout << nlohmann::json{{"id", rep.id()},
                                  {"state", rep.state()},
                                  {"queue_position", rep.queue_position()},
                                  {"estimated_start_ms", rep.estimated_start_ms()},
                                  {"waiting_for_board", rep.wait().board()},
                                  {"holder", rep.wait().holder()},
                                  {"lease_until_ms", rep.wait().lease_until_ms()}}
                       .dump()
                << "\n";
    } else {
      std::cout << rep.id() << "\n";
      std::cerr << "job " << rep.id() << " " << rep.state() << " (" << queue
                << "); follow it with: mculab show " << rep.id() << "\n";
    }
    return 0;
  }
  if (!o.json) std::cerr << "job " << rep.id() << " " << rep.state() << " (" << queue << ")\n";
  const std::string final_state = Watch(c, rep.id(), o.json);
  v1::Results res = GetResults(c, rep.id(), o.json);
  if (o.json)
    std::cout << ResultsJson(res) << "\n";
  else  // what `mculab show` prints: statistics, events and memory
    std::cout << RenderResults(res) << RenderEventStats(res) << RenderMemory(res);
  return final_state == "succeeded" ? 0 : 1;
}

int CmdJobs(Client& c, const v1::ListJobsRequest& req, bool json) {
  v1::ListJobsReply rep;
  auto ctx = c.Context();
  grpc::Status s = c.stub().ListJobs(ctx.get(), req, &rep);
  if (!s.ok()) c.Fail(s, "listing jobs");
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& j : rep.jobs())
      out.push_back({{"id", j.id()},
                     {"state", j.state()},
                     {"op", j.op()},
                     {"kind", j.kind()},
                     {"board", JobBoard(j) == "-" ? std::string() : JobBoard(j)},
                     {"requested_board", j.board()},
                     {"priority", j.priority()},
                     {"progress_done", j.progress_done()},
                     {"progress_total", j.progress_total()},
                     {"queue_position", j.wait().position()},
                     {"estimated_start_ms", j.wait().estimated_start_ms()},
                     {"user", j.user()},
                     {"label", j.label()},
                     {"created_ms", j.created_ms()},
                     {"started_ms", j.started_ms()},
                     {"finished_ms", j.finished_ms()},
                     {"attempts", j.attempts()},
                     {"tags", std::map<std::string, std::string>(j.tags().begin(), j.tags().end())},
                     {"message", j.message()}});
    std::cout << out.dump(2) << "\n";
  } else if (rep.jobs_size() == 0) {
    std::cout << "no jobs\n";
  } else {
    std::cout << RenderJobs(rep);
  }
  return 0;
}

int CmdShow(Client& c, uint64_t id, bool json, bool ops) {
  v1::Results res = GetResults(c, id, json);
  if (ops) {
    std::cout << RenderOps(res);
    return 0;
  }
  if (json)
    std::cout << ResultsJson(res) << "\n";
  else
    std::cout << RenderResults(res) << RenderEventStats(res) << RenderMemory(res);
  return 0;
}

int CmdEvents(Client& c, const std::string& kind, const std::string& board) {
  if (kind.empty() && board.empty()) throw UsageError{"give --kind KIND or --board NAME"};
  v1::ListEventsRequest req;
  req.set_kind(kind);
  req.set_board(board);
  v1::ListEventsReply rep;
  auto ctx = c.Context();
  grpc::Status s = c.stub().ListEvents(ctx.get(), req, &rep);
  if (!s.ok()) c.Fail(s, "listing events");
  std::cout << RenderEventUnits(rep);
  return 0;
}

int CmdExport(Client& c, uint64_t id, const std::string& out_path, const std::string& format) {
  if (format != "csv" && format != "ops-csv" && format != "json")
    throw UsageError{"--format must be csv, ops-csv or json, got '" + format + "'"};
  v1::Results res = GetResults(c, id, format == "json");
  if (res.job().state() != "succeeded")
    throw UsageError{"job " + std::to_string(id) + " is " + res.job().state() +
                     "; only a succeeded job has results to export"};
  const std::string csv = format == "json"      ? ResultsJson(res) + "\n"
                          : format == "ops-csv" ? ExportCsv(res)
                                                : ExportFullCsv(res);
  if (out_path.empty() || out_path == "-") {
    std::cout << csv;
  } else {
    std::ofstream out(out_path, std::ios::binary);
    if (!out) throw UsageError{"cannot write " + out_path};
    out << csv;
    std::cerr << "wrote " << out_path << " (" << res.cases_size()
              << (res.cases_size() == 1 ? " case)\n" : " cases)\n");
  }
  return 0;
}

int CmdCancel(Client& c, uint64_t id) {
  v1::CancelJobRequest req;
  req.set_id(id);
  v1::Job job;
  auto ctx = c.Context();
  grpc::Status s = c.stub().CancelJob(ctx.get(), req, &job);
  if (!s.ok()) c.Fail(s, "cancel job " + std::to_string(id));
  std::cout << "job " << job.id() << " " << job.state() << "\n";
  return 0;
}

// ---- reservations, maintenance, board history ----

std::string BoardLine(const v1::Board& b) {
  std::string line = "board " + b.name() + " " + b.state() + ", health " + b.health();
  if (!b.holder().empty()) {
    const auto secs = static_cast<std::time_t>(b.lease_until_ms() / 1000);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
    line += ", reserved by " + b.holder() + " until " + buf;
    if (!b.reservation_note().empty()) line += " (" + b.reservation_note() + ")";
  }
  return line;
}

int CmdReserve(Client& c, const std::string& board, const std::string& duration,
               const std::string& note, bool json) {
  auto ms = ParseDurationMs(duration);
  if (!ms.ok()) throw UsageError{ms.error().message};
  v1::ReserveRequest req;
  req.set_board(board);
  req.set_duration_ms(*ms);
  req.set_note(note);
  v1::Board b;
  auto ctx = c.Context();
  grpc::Status s = c.stub().Reserve(ctx.get(), req, &b);
  if (!s.ok()) c.Fail(s, "reserve " + board);
  if (json) {
    std::cout << nlohmann::json{{"board", b.name()},
                                {"holder", b.holder()},
                                {"lease_until_ms", b.lease_until_ms()},
                                {"state", b.state()}}
                     .dump()
              << "\n";
  } else {
    std::cout << BoardLine(b) << "\n";
  }
  return 0;
}

int CmdRelease(Client& c, const std::string& board) {
  v1::ReleaseRequest req;
  req.set_board(board);
  v1::Board b;
  auto ctx = c.Context();
  grpc::Status s = c.stub().Release(ctx.get(), req, &b);
  if (!s.ok()) c.Fail(s, "release " + board);
  // The board may go at once to a job that waited for it, or still run one it started for the
  // holder: say which job, so "busy" is not read as "still yours".
  std::cout << "released " << b.name();
  if (b.state() == "busy" && b.current_job() != 0)
    std::cout << "; it now runs job " << b.current_job() << " (health " << b.health() << ")";
  else
    std::cout << "; " << BoardLine(b);
  std::cout << "\n";
  return 0;
}

// `mculab reserve BOARD --hold`: a short lease renewed every third of it while this runs;
// released on SIGINT/SIGTERM (blocked by the caller before any thread started, taken here with
// sigtimedwait). A killed process stops renewing and the lease runs out by itself.
int CmdHold(Client& c, const std::string& board, const std::string& lease, const std::string& note,
            const sigset_t& signals) {
  auto ms = ParseDurationMs(lease);
  if (!ms.ok()) throw UsageError{ms.error().message};
  v1::ReserveRequest req;
  req.set_board(board);
  req.set_duration_ms(*ms);
  req.set_note(note);
  req.set_hold(true);
  v1::Board b;
  {
    auto ctx = c.Context();
    grpc::Status s = c.stub().Reserve(ctx.get(), req, &b);
    if (!s.ok()) c.Fail(s, "hold " + board);
  }
  std::cout << "holding " << board << " (lease " << FormatDurationMs(*ms)
            << ", renewed while this runs); Ctrl-C releases it" << std::endl;
  const std::int64_t every_ms = std::max<std::int64_t>(*ms / 3, 100);
  while (true) {
    timespec ts{static_cast<time_t>(every_ms / 1000),
                static_cast<long>((every_ms % 1000) * 1000000)};
    const int sig = sigtimedwait(&signals, nullptr, &ts);
    if (sig == SIGINT || sig == SIGTERM) break;
    v1::RenewReservationRequest renew;
    renew.set_board(board);
    renew.set_duration_ms(*ms);
    auto ctx = c.Context(std::max<int>(1, static_cast<int>(every_ms / 1000)));
    grpc::Status s = c.stub().RenewReservation(ctx.get(), renew, &b);
    if (!s.ok() && s.error_code() == grpc::StatusCode::FAILED_PRECONDITION) {
      std::cerr << "mculab: error: lost the hold of " << board << ": " << s.error_message() << "\n";
      return 1;
    }
    if (!s.ok())
      std::cerr << "mculab: warning: renewing the hold failed: " << s.error_message() << "\n";
  }
  v1::ReleaseRequest rel;
  rel.set_board(board);
  auto ctx = c.Context(10);
  grpc::Status s = c.stub().Release(ctx.get(), rel, &b);
  if (!s.ok()) c.Fail(s, "release " + board);
  std::cout << "released " << board << std::endl;
  return 0;
}

int CmdBoard(Client& c, const std::string& board, const std::string& maintenance,
             const std::string& reason, bool history, bool json) {
  if (!maintenance.empty()) {
    if (maintenance != "on" && maintenance != "off")
      throw UsageError{"--maintenance takes on or off, got '" + maintenance + "'"};
    v1::SetMaintenanceRequest req;
    req.set_board(board);
    req.set_on(maintenance == "on");
    req.set_reason(reason);
    v1::Board b;
    auto ctx = c.Context();
    grpc::Status s = c.stub().SetMaintenance(ctx.get(), req, &b);
    if (!s.ok()) c.Fail(s, "maintenance " + maintenance + " for " + board);
    std::cout << BoardLine(b) << "\n";
    if (!history) return 0;
  }
  if (!history) throw UsageError{"give --history or --maintenance on|off"};
  v1::BoardHistoryRequest req;
  req.set_board(board);
  v1::BoardHistoryReply rep;
  auto ctx = c.Context();
  grpc::Status s = c.stub().BoardHistory(ctx.get(), req, &rep);
  if (!s.ok()) c.Fail(s, "history of " + board);
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& t : rep.transitions())
      out.push_back({{"field", t.field()},
                     {"from", t.from()},
                     {"to", t.to()},
                     {"reason", t.reason()},
                     {"actor", t.actor()},
                     {"time_ms", t.time_ms()}});
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  for (const auto& t : rep.transitions()) {
    const auto secs = static_cast<std::time_t>(t.time_ms() / 1000);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
    std::cout << buf << "  " << t.actor() << "  " << t.field() << " "
              << (t.from().empty() ? "-" : t.from()) << " -> " << (t.to().empty() ? "-" : t.to())
              << "  " << t.reason() << "\n";
  }
  return 0;
}

// `mculab trend`: which case (flags, or a job and one of its case ids), the series, printed.
struct TrendOptions {
  std::string kind, op, params, runner, user, label;
  std::vector<std::string> tags;
  int64_t case_id = 0;
  bool has_case = false;
  uint64_t job = 0;
  unsigned limit = 200, window = 3;
  double min_step = 0.01;
  bool json = false;
};

int CmdTrend(Client& c, const TrendOptions& o) {
  v1::GetSeriesRequest req;
  req.set_kind(o.kind);
  req.set_op(o.op);
  if (o.job != 0) {
    if (!o.has_case) throw UsageError{"--job needs --case: the id of one of its cases"};
    v1::Results res = GetResults(c, o.job, false);
    if (req.kind().empty()) req.set_kind(res.job().kind());
    if (req.op().empty()) req.set_op(res.job().op());
    const v1::CaseStats* found = nullptr;
    for (const auto& cs : res.cases())
      if (cs.case_id() == o.case_id) found = &cs;
    if (!found) {
      throw UsageError{"job " + std::to_string(o.job) + " has no case with id " +
                       std::to_string(o.case_id)};
    }
    if (FindOp(req.op()) != nullptr) {
      req.set_has_params(true);
      for (int32_t p : found->params()) req.add_params(p);
    } else {
      req.set_has_case_id(true);
      req.set_case_id(o.case_id);
    }
  } else {
    if (o.kind.empty() || o.op.empty())
      throw UsageError{"give --kind and --op with --params (or --case), or --job ID --case ID"};
    if (!o.params.empty()) {
      req.set_has_params(true);
      std::stringstream ss(o.params);
      std::string part;
      while (std::getline(ss, part, ',')) {
        try {
          std::size_t used = 0;
          const int v = std::stoi(part, &used);
          if (used != part.size()) throw std::invalid_argument(part);
          req.add_params(v);
        } catch (const std::exception&) {
          throw UsageError{"--params must be integers separated by commas, got '" + o.params + "'"};
        }
      }
    }
    if (o.has_case) {
      req.set_has_case_id(true);
      req.set_case_id(o.case_id);
    }
  }
  req.set_runner(o.runner);
  req.set_user(o.user);
  req.set_label(o.label);
  for (const std::string& t : o.tags) {
    ParsedTag p = ParseTag(t);
    if (!p.error.empty()) throw UsageError{p.error};
    (*req.mutable_tags())[p.key] = p.value;
  }
  req.set_limit(o.limit);
  req.set_window(o.window);
  req.set_min_step(o.min_step);
  v1::Series rep;
  auto ctx = c.Context(120);
  grpc::Status s = c.stub().GetSeries(ctx.get(), req, &rep);
  if (!s.ok()) c.Fail(s, "series");
  if (o.json)
    std::cout << TrendJson(rep).dump(2) << "\n";
  else
    std::cout << RenderTrend(rep);
  return 0;
}

int Main(int argc, char** argv) {
  CLI::App app{
      "mculab: submit, follow and read ML inference benchmarks on a shared lab of "
      "microcontroller boards"};
  app.set_version_flag("--version", std::string("mculab ") + MCULAB_VERSION);
  app.require_subcommand(1);
  std::string server, token, ca, config_path;
  app.add_option("--server", server, "server address host:port (or MCULAB_SERVER)");
  app.add_option("--token", token, "access token (or MCULAB_TOKEN)");
  app.add_option("--ca", ca, "CA certificate (PEM) to talk TLS to the server");
  app.add_option("--config", config_path,
                 "client config file (default ~/.config/mculab/config.toml)");

  bool json = false;
  auto* boards = app.add_subcommand("boards", "list the lab's boards: state, health, queue");
  boards->add_flag("--json", json, "print JSON");

  SubmitOptions so;
  auto* submit = app.add_subcommand(
      "submit", "submit an operator benchmark, a .tflite model or your own runner");
  submit->add_option("--kind", so.kind, "board kind, e.g. corstone300-qemu, host");
  submit->add_option("--board", so.board, "one board by name");
  submit->add_option("--op", so.op, "operator benchmark: " + OpNames());
  submit->add_option(
      "--cases", so.cases,
      "CSV of the parameter sweep (id column first); with --firmware: case ids (optional)");
  submit->add_option("--firmware", so.firmware,
                     "your runner: an ELF for the board (docs/writing-a-runner.md)");
  submit->add_option("--blob", so.blob,
                     "a file your runner reads (model, inputs); with --firmware");
  submit->add_option("--model", so.model,
                     "a .tflite int8 model, run by the lab's own runner on any board "
                     "(`mculab models inspect FILE` shows its graph)");
  submit->add_option("--input", so.input,
                     "the model's input tensor as raw int8 bytes (default: a seeded pattern); "
                     "with --model");
  submit->add_option("--iterations", so.iterations, "measured iterations per case")
      ->check(CLI::Range(1u, 100000u))
      ->capture_default_str();
  submit->add_option("--warmup", so.warmup, "unmeasured iterations before measuring")
      ->check(CLI::Range(0u, 100000u))
      ->capture_default_str();
  submit->add_option("--label", so.label, "a label shown in the history");
  submit->add_option("--timeout", so.timeout_s,
                     "seconds before the job is timed out (0: server default)");
  submit->add_option("--priority", so.priority, "high, normal (default) or low")
      ->check(CLI::IsMember({"high", "normal", "low"}));
  submit->add_option("--events", so.events,
                     "counter events besides cycles, comma separated (see `mculab events`); the "
                     "server splits them into passes");
  submit->add_option("--tag", so.tags,
                     "KEY=VALUE: run only on a board with this tag (repeatable; see `mculab "
                     "boards`), e.g. --tag cpu=cortex-m55");
  submit->add_flag("--wait", so.wait, "follow the job and print its results");
  submit->add_flag("--json", so.json, "print JSON");

  v1::ListJobsRequest jr;
  std::string jstate, jkind, jboard, jop, juser;
  unsigned jlimit = 20;
  uint64_t jbefore = 0;
  auto* jobs = app.add_subcommand("jobs", "list jobs, newest first");
  jobs->add_option("--state", jstate, "queued, running, succeeded, failed, ...");
  jobs->add_option("--kind", jkind, "board kind");
  jobs->add_option("--board", jboard, "board name");
  jobs->add_option("--op", jop, "operator");
  jobs->add_option("--user", juser, "submitter");
  jobs->add_option("--limit", jlimit, "how many")
      ->check(CLI::Range(1u, 1000u))
      ->capture_default_str();
  jobs->add_option("--before", jbefore, "only jobs with an id below this (paging)");
  jobs->add_flag("--json", json, "print JSON");

  uint64_t id = 0;
  auto* show = app.add_subcommand("show", "a job's state, provenance and per-case statistics");
  show->add_option("id", id, "job id")->required();
  show->add_flag("--json", json, "print JSON, raw per-iteration values included");
  bool show_ops = false;
  show->add_flag("--ops", show_ops, "the per-operator profile, sorted by share of the total");
  std::string ev_kind, ev_board;
  auto* events =
      app.add_subcommand("events", "the events a kind of board counts, per counter unit");
  events->add_option("--kind", ev_kind, "board kind");
  events->add_option("--board", ev_board, "one board by name");

  bool csv_flag = false;
  std::string out_path, export_format = "csv";
  auto* exp = app.add_subcommand("export", "a job's results as a file: the full table by default");
  exp->add_option("id", id, "job id")->required();
  exp->add_flag("--csv", csv_flag,
                "the full CSV table (the default): parameters, n, min, median, "
                "mean, p90, p99, stddev, cv, overhead, events, checksum; units in column names");
  exp->add_option("--format", export_format,
                  "csv (the full table), ops-csv (the operator-benchmark layout id,<unit> with "
                  "the medians) or json (the document of `show --json`)")
      ->capture_default_str();
  exp->add_option("-o,--output", out_path, "file to write (default: standard output)");

  std::string describe_op;
  auto* ops = app.add_subcommand("ops", "the built-in operator benchmarks (no server needed)");
  auto* ops_describe =
      ops->add_subcommand("describe", "an op's parameters, CSV synonyms, defaults and limits");
  ops_describe->add_option("op", describe_op, "op name: " + OpNames())->required();

  std::string model_path, model_input;
  auto* models = app.add_subcommand("models", ".tflite models (no server needed)");
  auto* models_inspect = models->add_subcommand(
      "inspect", "a model's graph: operators, shapes, parameters, MACs per layer, planned arena");
  models_inspect->add_option("file", model_path, ".tflite model")->required();
  models_inspect->add_option("--input", model_input, "check an input file's size against it");
  models_inspect->add_flag("--json", json, "print JSON");
  models->require_subcommand(1);

  auto* cancel = app.add_subcommand("cancel", "cancel a job in any state");
  cancel->add_option("id", id, "job id")->required();

  TrendOptions to;
  auto* trend = app.add_subcommand(
      "trend",
      "one case's median over time, job after job, with 95% intervals, runner changes and "
      "change points (the web page's trend view)");
  trend->add_option("--job", to.job, "take the kind, op and case from this job (with --case)");
  trend->add_option("--kind", to.kind, "board kind");
  trend->add_option("--op", to.op, "operator benchmark, or custom for your runner");
  trend->add_option("--params", to.params,
                    "the case's parameters in the op's order, comma separated (see `mculab ops "
                    "describe OP`)");
  trend->add_option("--case", to.case_id, "the case id (custom runners; with --job)")
      ->each([&](const std::string&) { to.has_case = true; });
  trend->add_option("--runner", to.runner, "custom runners: the uploaded runner's file name");
  trend->add_option("--user", to.user, "only this user's jobs");
  trend->add_option("--label", to.label, "only jobs whose label contains this");
  trend->add_option("--tag", to.tags, "KEY=VALUE: only jobs that asked for this tag (repeatable)");
  trend->add_option("--limit", to.limit, "the newest jobs to show")
      ->check(CLI::Range(1u, 1000u))
      ->capture_default_str();
  trend
      ->add_option("--window", to.window,
                   "change points: jobs either side of a step whose intervals must not overlap")
      ->check(CLI::Range(1u, 50u))
      ->capture_default_str();
  trend
      ->add_option("--min-step", to.min_step, "change points: the least relative step (0.01 is 1%)")
      ->check(CLI::Range(0.0001, 10.0))
      ->capture_default_str();
  trend->add_flag("--json", to.json, "print the JSON document of GET /api/v1/series");

  std::string board_name, for_duration, note, lease = "30s", maintenance, reason;
  bool hold = false, history = false;
  auto* reserve = app.add_subcommand("reserve", "reserve a board: only your jobs run on it");
  reserve->add_option("board", board_name, "board name")->required();
  reserve->add_option("--for", for_duration, "how long, e.g. 2h, 30m, 1h30m");
  reserve->add_option("--note", note, "why (shown in mculab boards)");
  reserve->add_flag("--hold", hold, "hold the board while this command runs; Ctrl-C releases it");
  reserve->add_option("--lease", lease, "the --hold lease, renewed every third of it")
      ->capture_default_str();
  reserve->add_flag("--json", json, "print JSON");
  auto* release = app.add_subcommand("release", "end your reservation of a board");
  release->add_option("board", board_name, "board name")->required();
  auto* board_cmd = app.add_subcommand("board", "one board: its history, maintenance mode");
  board_cmd->add_option("board", board_name, "board name")->required();
  board_cmd->add_option("--maintenance", maintenance, "on or off (admin)");
  board_cmd->add_option("--reason", reason, "why, for the audit trail");
  board_cmd->add_flag("--history", history, "print the board's audit trail (who, what, when)");
  board_cmd->add_flag("--json", json, "print JSON");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  sigset_t hold_signals;
  sigemptyset(&hold_signals);
  if (*reserve) {
    if (hold == !for_duration.empty())
      return std::cerr << "mculab: error: give either --for DURATION or --hold\n", 2;
    if (hold) {
      // Before any gRPC thread exists, so that every thread inherits the mask and CmdHold takes
      // the signals with sigtimedwait.
      sigaddset(&hold_signals, SIGINT);
      sigaddset(&hold_signals, SIGTERM);
      pthread_sigmask(SIG_BLOCK, &hold_signals, nullptr);
    }
  }

  if (*ops) {
    if (!*ops_describe) {
      for (const auto& op : AllOps()) std::cout << op.name << "  " << op.description << "\n";
      std::cout << "(`mculab ops describe OP` lists an op's parameters)\n";
      return 0;
    }
    const OpInfo* op = FindOp(describe_op);
    if (!op) {
      std::cerr << "mculab: error: unknown op '" << describe_op << "'; built-in ops: " << OpNames()
                << "\n";
      return 2;
    }
    std::cout << RenderOpDescription(*op);
    return 0;
  }

  if (*models_inspect) {
    auto text = cli::InspectModelFile(model_path, model_input, json);
    if (!text.ok()) return std::cerr << "mculab: error: " << text.error().message << "\n", 1;
    std::cout << *text;
    return 0;
  }

  try {
    ConfigInputs in;
    if (!server.empty()) in.server_flag = server;
    if (!token.empty()) in.token_flag = token;
    if (!ca.empty()) in.ca_flag = ca;
    in.env = Environment();
    in.config_file =
        config_path.empty() ? DefaultConfigPath(in.env) : std::filesystem::path(config_path);
    if (!config_path.empty() && !std::filesystem::exists(config_path))
      throw UsageError{"config file " + config_path + " does not exist"};
    auto cfg = ResolveClientConfig(in);
    if (!cfg.ok()) throw UsageError{cfg.error().message};
    Client client(*cfg);

    if (*boards) return CmdBoards(client, json);
    if (*submit) return CmdSubmit(client, so);
    if (*jobs) {
      jr.set_state(jstate);
      jr.set_kind(jkind);
      jr.set_board(jboard);
      jr.set_op(jop);
      jr.set_user(juser);
      jr.set_limit(jlimit);
      jr.set_before_id(jbefore);
      return CmdJobs(client, jr, json);
    }
    if (*show) return CmdShow(client, id, json, show_ops);
    if (*events) return CmdEvents(client, ev_kind, ev_board);
    if (*exp) return CmdExport(client, id, out_path, export_format);
    if (*cancel) return CmdCancel(client, id);
    if (*trend) return CmdTrend(client, to);
    if (*reserve) {
      return hold ? CmdHold(client, board_name, lease, note, hold_signals)
                  : CmdReserve(client, board_name, for_duration, note, json);
    }
    if (*release) return CmdRelease(client, board_name);
    if (*board_cmd) return CmdBoard(client, board_name, maintenance, reason, history, json);
  } catch (const UsageError& e) {
    std::cerr << "mculab: error: " << e.message << "\n";
    return 2;
  }
  return 2;
}

}  // namespace
}  // namespace mculab::cli

int main(int argc, char** argv) { return mculab::cli::Main(argc, argv); }
