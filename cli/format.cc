#include "cli/format.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/duration.h"
#include "common/lists.h"
#include "common/stats.h"
#include "common/time_text.h"
#include "proto/json/documents.h"

namespace mculab::cli {
namespace {

bool LooksNumeric(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '%' ||
          c == 'e' || c == '+'))
      return false;
  return std::isdigit(static_cast<unsigned char>(s.back())) || s.back() == '%';
}

std::string ParamsText(const mculab::v1::Results& r, const mculab::v1::CaseStats& c) {
  std::string out;
  for (int i = 0; i < c.params_size(); ++i) {
    if (!out.empty()) out += " ";
    if (i < r.param_names_size()) out += r.param_names(i) + "=";
    out += std::to_string(c.params(i));
  }
  return out;
}

}  // namespace

std::string MeasuredLabel(const std::string& kind) {
  if (kind == "emulated") return "EMULATED";
  if (kind == "host") return "HOST (native)";
  return "silicon";
}

std::string RenderTable(const std::vector<std::string>& header,
                        const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(header.size(), 0);
  for (size_t i = 0; i < header.size(); ++i) width[i] = header[i].size();
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size() && i < width.size(); ++i)
      width[i] = std::max(width[i], row[i].size());
  std::ostringstream out;
  auto line = [&](const std::vector<std::string>& cells, bool is_header) {
    for (size_t i = 0; i < width.size(); ++i) {
      const std::string cell = i < cells.size() ? cells[i] : "";
      const size_t pad = width[i] - cell.size();
      const bool right = !is_header && LooksNumeric(cell);
      if (i) out << "  ";
      if (right)
        out << std::string(pad, ' ') << cell;
      else if (i + 1 == width.size())
        out << cell;
      else
        out << cell << std::string(pad, ' ');
    }
    out << "\n";
  };
  line(header, true);
  for (const auto& row : rows) line(row, false);
  return out.str();
}

std::string ProgressBar(unsigned done, unsigned total, int width) {
  if (width < 1) width = 1;
  const unsigned shown = total == 0 ? 0 : std::min(done, total);
  const int filled =
      total == 0 ? 0 : static_cast<int>((static_cast<uint64_t>(shown) * width) / total);
  return "[" + std::string(filled, '#') + std::string(width - filled, '.') + "] " +
         std::to_string(done) + "/" + std::to_string(total);
}

std::string FormatNumber(double v) {
  if (!std::isfinite(v)) return "-";
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  char buf[64];
  const double a = std::fabs(v);
  if (a >= 100)
    std::snprintf(buf, sizeof buf, "%.1f", v);
  else if (a >= 1)
    std::snprintf(buf, sizeof buf, "%.3f", v);
  else
    std::snprintf(buf, sizeof buf, "%.3g", v);
  std::string s = buf;
  if (s.find('.') != std::string::npos && s.find('e') == std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  return s;
}

std::string RenderOpDescription(const OpInfo& op) {
  std::ostringstream out;
  out << op.name << ": " << op.description << "\n\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : op.params) {
    std::string synonyms;
    for (const auto& s : p.synonyms) synonyms += (synonyms.empty() ? "" : ", ") + s;
    rows.push_back({p.name, p.default_value ? "no" : "yes",
                    p.default_value ? std::to_string(*p.default_value) : "-",
                    std::to_string(p.min_value) + ".." + std::to_string(p.max_value), synonyms});
  }
  out << RenderTable({"parameter", "required", "default", "range", "CSV header synonyms"}, rows);
  if (!op.limits.empty()) out << "limits: " << op.limits << "\n";
  out << "\nCSV: a header line, first column the case id, then one column per parameter in any "
         "order (names\nor synonyms, any case); optional parameters may be left out. A board "
         "with ram_bytes set also\nrefuses at submit a case whose buffers do not fit.\n";
  return out.str();
}

std::string JobWorkload(const mculab::v1::Job& j) {
  return j.model_name().empty() ? j.op() : j.op() + " " + j.model_name();
}

std::string JobBoard(const mculab::v1::Job& j) {
  if (!j.assigned_board().empty()) return j.assigned_board();
  if (!j.board().empty()) return j.board();
  return "-";
}

std::string ProgressCell(const mculab::v1::Job& j) {
  if (j.state() == "queued" && j.wait().position() > 0) {
    if (!j.wait().board().empty()) {
      return "waits for " + j.wait().holder() + " (until " +
             UtcTimeText(j.wait().lease_until_ms()) + ")";
    }
    return "#" + std::to_string(j.wait().position()) + " in queue";
  }
  if (j.progress_total() == 0 || j.progress_done() == 0) return "-";
  if (j.progress_done() >= j.progress_total()) return "100%";
  const unsigned pct = static_cast<unsigned>(100.0 * j.progress_done() / j.progress_total());
  return std::to_string(pct) + "% (" + std::to_string(j.progress_done()) + "/" +
         std::to_string(j.progress_total()) + ")";
}

std::string ProgressLine(const mculab::v1::Job& j) {
  const std::string& s = j.state();
  if (s != "assigned" && s != "preparing" && s != "running") return "";
  if (j.progress_total() == 0 || j.iterations() == 0) return "";
  const unsigned cases_done = std::min<unsigned>(j.num_cases(), j.progress_done() / j.iterations());
  return "progress: " + std::to_string(cases_done) + " of " + std::to_string(j.num_cases()) +
         (j.num_cases() == 1 ? " case" : " cases") + " done; iterations " +
         ProgressBar(j.progress_done(), j.progress_total(), 20) + "\n";
}

namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::string WaitText(const mculab::v1::QueueWait& w, std::int64_t now_ms) {
  if (w.position() == 0) return "";
  std::string out = w.position() == 1 ? std::string("next in the queue")
                                      : "queue position " + std::to_string(w.position());
  if (!w.board().empty()) {
    out += "; waiting for board " + w.board() + ", reserved by " + w.holder() + " until " +
           UtcTimeText(w.lease_until_ms());
    if (!w.note().empty()) out += " (" + w.note() + ")";
  }
  if (w.estimated_start_ms() > 0) {
    const int64_t in_ms = w.estimated_start_ms() - now_ms;
    out += "; estimated start ";
    out += in_ms <= 1000 ? std::string("any moment now")
                         : "in about " + FormatDurationMs(in_ms / 1000 * 1000);
  } else {
    out += "; no estimate yet (no recent run of this kind and op)";
  }
  return out;
}

std::string RenderResults(const mculab::v1::Results& r, std::int64_t now_ms) {
  if (now_ms < 0) now_ms = NowMs();
  const auto& j = r.job();
  const auto& p = r.provenance();
  std::ostringstream out;
  out << "job " << j.id() << "  " << j.state() << "  " << JobWorkload(j) << " on " << JobBoard(j)
      << " (" << j.kind() << ")";
  if (!j.label().empty()) out << "  label: " << j.label();
  out << "\n";
  if (!j.model_sha256().empty()) {
    out << "model: " << j.model_name() << ", sha256 " << j.model_sha256() << "\n  "
        << j.model_summary() << "\n";
  }
  if (!j.commit().empty() || !j.branch().empty() || !j.url().empty()) {
    out << "code:";
    if (!j.commit().empty()) out << " commit " << j.commit();
    if (!j.branch().empty()) out << " branch " << j.branch();
    if (!j.url().empty()) out << " " << j.url();
    out << "\n";
  }
  if (j.reruns() > 0) {
    out << "reruns: " << j.reruns_done() << " of " << j.reruns() << " while a case's cv is above ";
    if (j.max_cv_pct() > 0) {
      out << j.max_cv_pct() << "%\n";
    } else {
      out << "the default (" << kDefaultMaxCvHost * 100 << "% host, " << kDefaultMaxCvSilicon * 100
          << "% silicon)\n";
    }
  }
  if (!j.message().empty()) out << "message: " << j.message() << "\n";
  if (j.state() == "queued" && j.wait().position() > 0)
    out << "waiting: " << WaitText(j.wait(), now_ms) << "\n";
  out << ProgressLine(j);
  out << "submitted " << UtcTimeText(j.created_ms()) << " by " << j.user();
  if (!j.priority().empty()) out << ", priority " << j.priority();
  out << ", " << j.num_cases() << (j.num_cases() == 1 ? " case x " : " cases x ") << j.iterations()
      << (j.iterations() == 1 ? " iteration" : " iterations") << " (+" << j.warmup()
      << " warm-up)\n";
  if (!j.tags().empty()) out << "tags: " << FormatTags(j.tags()) << "\n";
  if (j.firmware_artifact().empty() && !j.kernels().empty()) {
    // What the runner reported it ran, once it did; until then what was asked for.
    out << "kernels: "
        << (p.kernel_set().empty()
                ? j.kernels() + " (asked for)"
                : p.kernel_set() + " (the runner's report; asked for " + j.kernels() + ")")
        << "\n";
  }
  if (!p.runner_version().empty()) {
    out << "measured: " << MeasuredLabel(p.measured()) << ", unit " << p.timer_unit();
    if (p.clock_hz()) out << ", clock " << FormatNumber(p.clock_hz() / 1e6) << " MHz";
    out << "\n";
    if (!p.note().empty()) out << "note: " << p.note() << "\n";
    out << "provenance: board " << p.board() << " (" << p.board_kind() << ")"
        << (p.board_serial().empty() ? "" : " serial " + p.board_serial()) << ", agent "
        << p.agent() << ", runner " << p.runner_version() << " (" << p.port() << ", " << p.cpu()
        << ")\n";
    out << "  firmware sha256 " << p.firmware_sha256()
        << (j.firmware_artifact().empty() ? "" : " (custom runner)") << "\n";
    if (!j.blob_artifact().empty()) out << "  blob sha256     " << j.blob_artifact() << "\n";
    out << "  workload sha256 " << p.workload_sha256() << "\n";
    if (!p.toolchain().empty()) out << "  toolchain " << p.toolchain() << "\n";
  }
  if (r.cases_size() == 0) return out.str();
  std::string unit = p.timer_unit();
  int ran = 0;
  for (const auto& c : r.cases()) {
    if (!CaseRan(c)) continue;
    ++ran;
    if (!c.unit().empty()) unit = c.unit();
  }
  // A custom runner's output has no reference in the lab: say so rather than "ok".
  const bool custom = !j.firmware_artifact().empty();
  out << "\n";
  std::vector<std::vector<std::string>> rows;
  // A job still queued or on a board has cases to come: "pending", not "not run".
  const bool open = j.state() == "queued" || j.state() == "assigned" || j.state() == "preparing" ||
                    j.state() == "running";
  // A case whose cv is above the job's --max-cv, or its kind's default, is unstable
  // (common/stats.h Stability; `mculab compare --max-cv` judges with another).
  const double max_cv = LimitCv(p.measured(), j.max_cv_pct() / 100);
  int unstable = 0;
  for (const auto& c : r.cases()) {
    if (!CaseRan(c)) {
      rows.push_back({std::to_string(c.case_id()), ParamsText(r, c), "-", "-", "-", "-", "-", "-",
                      "-", "-", "-", open ? "pending" : "not run"});
      continue;
    }
    const bool noisy = Stability(c.cv(), p.measured(), max_cv) == "unstable";
    unstable += noisy ? 1 : 0;
    rows.push_back({std::to_string(c.case_id()), ParamsText(r, c), std::to_string(c.n()),
                    FormatNumber(c.min()), FormatNumber(c.median()), FormatNumber(c.mean()),
                    FormatNumber(c.p90()), FormatNumber(c.p99()), FormatNumber(c.stddev()),
                    FormatNumber(c.cv() * 100.0) + "%" + (noisy ? " unstable" : ""),
                    FormatNumber(c.overhead()),
                    custom            ? "not verified (custom firmware)"
                    : c.checksum_ok() ? "ok"
                                      : "MISMATCH"});
  }
  out << RenderTable({"case", "params", "n", "min", "median", "mean", "p90", "p99", "stddev", "cv",
                      "overhead", "checksum"},
                     rows);
  if (ran == 0) {
    if (open)
      out << "(no case has finished yet: the job is " << j.state() << ")\n";
    else
      out << "(no case ran: the job " << (j.state().empty() ? "ended" : "is " + j.state())
          << " before any case finished)\n";
    return out.str();
  }
  const std::string kind = p.measured();
  if (unstable > 0) {
    out << unstable << " case" << (unstable == 1 ? "" : "s")
        << " unstable: the timings vary more than " << FormatNumber(max_cv * 100.0) << "% (cv, ";
    if (j.max_cv_pct() > 0) {
      out << "the job's --max-cv";
    } else {
      out << "the default for " << kind << " timing";
    }
    out << "), so no comparison judges them; run more iterations or quiet the board\n";
  }
  out << "(" << unit << (kind == "silicon" || p.runner_version().empty() ? "" : ", " + kind)
      << "; overhead = the runner's empty measured region, shown, not subtracted";
  if (ran < r.cases_size())
    out << "; " << r.cases_size() - ran << (open ? " still to run" : " not run");
  out << ")\n";
  return out.str();
}

ParsedTag ParseTag(const std::string& text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    return {"", "",
            "--tag '" + text +
                "' is not KEY=VALUE with a non-empty key and value (e.g. --tag cpu=cortex-m55; "
                "`mculab boards` lists the boards' tags)"};
  }
  return {text.substr(0, eq), text.substr(eq + 1), ""};
}

std::string FormatTags(const google::protobuf::Map<std::string, std::string>& tags) {
  std::map<std::string, std::string> sorted(tags.begin(), tags.end());
  std::string out;
  for (const auto& [k, v] : sorted) out += (out.empty() ? "" : ",") + k + "=" + v;
  return out;
}

std::string KernelsText(const mculab::v1::Job& j, const std::string& ran) {
  if (!j.firmware_artifact().empty()) return "-";  // a custom runtime's kernels are its own
  if (!ran.empty()) return ran;
  return j.kernels().empty() ? "-" : j.kernels() + " (asked)";
}

std::string RenderJobs(const mculab::v1::ListJobsReply& jobs) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& j : jobs.jobs()) {
    rows.push_back({std::to_string(j.id()), j.state(), JobWorkload(j), j.kind(), JobBoard(j),
                    KernelsText(j, j.kernel_set()), j.user(), std::to_string(j.num_cases()),
                    ProgressCell(j), UtcTimeText(j.created_ms()), j.label()});
  }
  return RenderTable({"id", "state", "workload", "kind", "board", "kernels", "user", "cases",
                      "progress", "submitted", "label"},
                     rows);
}

std::string RenderBoards(const mculab::v1::ListBoardsReply& boards) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& b : boards.boards()) {
    std::string tags;
    for (const auto& [k, v] : b.tags()) tags += (tags.empty() ? "" : ",") + k + "=" + v;
    std::string holder = "-", until = "-";
    if (!b.holder().empty()) {
      holder = b.holder() + (b.hold() ? " (hold)" : "");
      until = UtcTimeText(b.lease_until_ms());
    }
    const std::string health = b.awaiting_approval() ? b.health() + " (to approve)" : b.health();
    rows.push_back({b.name(), b.kind(), b.state(), health, holder, until, b.agent(),
                    b.current_job() ? std::to_string(b.current_job()) : "-",
                    std::to_string(b.queue_length()) + "/" + std::to_string(b.kind_queue_length()),
                    b.measured(), tags, b.holder().empty() ? "" : b.reservation_note()});
  }
  return RenderTable({"board", "kind", "state", "health", "holder", "until", "agent", "job",
                      "queue board/kind", "timing", "tags", "note"},
                     rows);
}

std::string ResultsJson(const mculab::v1::Results& r) { return ResultsDocument(r).dump(2); }

std::string JobListJson(const mculab::v1::ListJobsReply& jobs) {
  return JobListDocument(jobs).dump(2);
}

}  // namespace mculab::cli
