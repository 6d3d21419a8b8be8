// GET /metrics: the Prometheus text format (version 0.0.4) of the lab's figures, and the meter
// behind mculab_ingest_samples_per_second.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <utility>

#include "server/service/queries.h"

namespace mculab::server::http {

// Samples stored per second over the last `window_ms`, from readings of the store's sample
// counter (LabFigures::samples_stored) taken by whoever observes it: the HTTP server once a
// second, and every scrape. Thread-safety: every method may be called from any thread.
class IngestMeter {
 public:
  explicit IngestMeter(std::int64_t window_ms = 10'000) : window_ms_(window_ms) {}
  void Observe(std::int64_t now_ms, std::uint64_t samples_stored);
  // 0 until two readings at least 1 s apart exist.
  double Rate() const;

 private:
  const std::int64_t window_ms_;
  mutable std::mutex mu_;
  std::deque<std::pair<std::int64_t, std::uint64_t>> readings_;  // (time, counter), oldest first
};

std::string PrometheusText(const LabFigures& figures, double ingest_samples_per_second);

inline constexpr const char* kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace mculab::server::http
