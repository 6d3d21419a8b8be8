#include "proto/json/export_csv.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "common/stats.h"
#include "proto/json/documents.h"

namespace mculab {

ExportUnit ExportUnitFor(const std::string& timer_unit) {
  if (timer_unit == "ns") return {"us", 1000.0};
  if (timer_unit == "us") return {"us", 1.0};
  if (timer_unit == "ms") return {"ms", 1.0};
  // An emulated board's executed instructions are not cycles: the header says which.
  if (timer_unit == "instructions") return {"instructions", 1.0};
  return {"cycles", 1.0};
}

std::string ExportCsv(const mculab::v1::Results& r) {
  const ExportUnit u = ExportUnitFor(r.provenance().timer_unit());
  std::string out = "id," + u.unit + "\n";
  for (const auto& c : r.cases()) {
    // Exact: a median of integer ns is a multiple of 0.5 ns, so 4 decimals of us lose nothing.
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.4f", c.median() / u.divide_by);
    std::string v = buf;
    while (v.back() == '0') v.pop_back();
    if (v.back() == '.') v.pop_back();
    out += std::to_string(c.case_id()) + "," + v + "\n";
  }
  return out;
}

namespace {

std::string CsvNumber(double v, double divide_by = 1.0) {
  if (!std::isfinite(v)) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6f", v / divide_by);
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

std::string CsvCell(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

std::string ExportFullCsv(const mculab::v1::Results& r) {
  const ExportUnit u = ExportUnitFor(r.provenance().timer_unit());
  const bool custom = !r.job().firmware_artifact().empty();
  // Stability as the comparison judges it (docs/ci.md): exact for an emulated count, else the
  // timer's cv against the job's --max-cv or its kind's default.
  const std::string& measured = r.measured();
  const double max_cv = r.job().max_cv_pct() / 100;
  // The counted events, in the order they first appear.
  std::vector<std::string> events;
  for (const auto& c : r.counters()) {
    if (std::find(events.begin(), events.end(), c.metric()) == events.end())
      events.push_back(c.metric());
  }
  std::string out = "id";
  for (const auto& p : r.param_names()) out += "," + CsvCell(p);
  out += ",n";
  for (const char* s : {"min", "median", "mean", "p90", "p99", "stddev"})
    out += "," + std::string(s) + "_" + u.unit;
  out += ",cv_percent,stability,overhead_" + u.unit;
  for (const auto& e : events) out += "," + CsvCell(e + "_median_count");
  out += ",checksum\n";
  for (const auto& c : r.cases()) {
    out += std::to_string(c.case_id());
    for (int i = 0; i < r.param_names_size(); ++i)
      out += "," + (i < c.params_size() ? std::to_string(c.params(i)) : std::string());
    const bool ran = c.n() > 0;  // a case that has not run has no figures
    out += "," + (ran ? std::to_string(c.n()) : std::string());
    for (double v : {c.min(), c.median(), c.mean(), c.p90(), c.p99(), c.stddev()})
      out += "," + (ran ? CsvNumber(v, u.divide_by) : std::string());
    out += "," + (ran ? CsvNumber(c.cv() * 100.0) : std::string());
    out += "," + (ran ? std::string(Stability(c.cv(), measured, max_cv)) : std::string());
    out += "," + (ran ? CsvNumber(c.overhead(), u.divide_by) : std::string());
    for (const auto& e : events) {
      std::string cell;
      for (const auto& k : r.counters())
        if (k.index() == c.index() && k.metric() == e && k.n() > 0) cell = CsvNumber(k.median());
      out += "," + cell;
    }
    out += std::string(",") + (!ran              ? "not run"
                               : custom          ? "not verified"
                               : c.checksum_ok() ? "ok"
                                                 : "mismatch");
    out += "\n";
  }
  return out;
}

}  // namespace mculab
