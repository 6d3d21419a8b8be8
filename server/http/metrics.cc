#include "server/http/metrics.h"

#include <fmt/format.h>

namespace mculab::server::http {

void IngestMeter::Observe(std::int64_t now_ms, std::uint64_t samples_stored) {
  std::lock_guard l(mu_);
  if (!readings_.empty() && now_ms < readings_.back().first) return;  // out of order: ignored
  readings_.emplace_back(now_ms, samples_stored);
  // Keep the newest reading that is at least a window old, and everything after it.
  while (readings_.size() > 2 && readings_[1].first <= now_ms - window_ms_) readings_.pop_front();
}

double IngestMeter::Rate() const {
  std::lock_guard l(mu_);
  if (readings_.size() < 2) return 0;
  const auto& [t0, n0] = readings_.front();
  const auto& [t1, n1] = readings_.back();
  if (t1 - t0 < 1000 || n1 < n0) return 0;
  return static_cast<double>(n1 - n0) * 1000.0 / static_cast<double>(t1 - t0);
}

std::string PrometheusText(const LabFigures& f, double ingest) {
  std::string out;
  out += "# HELP mculab_jobs Jobs in the database, by state.\n# TYPE mculab_jobs gauge\n";
  for (const auto& [state, n] : f.jobs_by_state) {
    out += fmt::format("mculab_jobs{{state=\"{}\"}} {}\n", state, n);
  }
  out += "# HELP mculab_queue_length Jobs waiting for a board.\n# TYPE mculab_queue_length gauge\n";
  out += fmt::format("mculab_queue_length {}\n", f.queue_length);
  out +=
      "# HELP mculab_samples_stored_total Raw samples stored.\n"
      "# TYPE mculab_samples_stored_total counter\n";
  out += fmt::format("mculab_samples_stored_total {}\n", f.samples_stored);
  out += "# HELP mculab_boards Boards, by scheduling state.\n# TYPE mculab_boards gauge\n";
  for (const auto& [state, n] : f.boards_by_state) {
    out += fmt::format("mculab_boards{{state=\"{}\"}} {}\n", state, n);
  }
  out +=
      "# HELP mculab_refused_agent_messages_total Agent messages and artifact fetches refused "
      "because they named a run the agent does not hold.\n"
      "# TYPE mculab_refused_agent_messages_total counter\n";
  out += fmt::format("mculab_refused_agent_messages_total {}\n", f.refused_agent_messages);
  out +=
      "# HELP mculab_ingest_samples_per_second Samples stored per second over the last 10 s.\n"
      "# TYPE mculab_ingest_samples_per_second gauge\n";
  out += fmt::format("mculab_ingest_samples_per_second {:.1f}\n", ingest);
  return out;
}

}  // namespace mculab::server::http
