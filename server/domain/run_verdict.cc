#include "server/domain/run_verdict.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "server/domain/pass_planner.h"

namespace mculab::server {
namespace {

std::string Hex(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

std::string JoinFlags(const std::vector<std::string>& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? "; " : "") + v[i];
  return out;
}

}  // namespace

std::string ChecksumFailure(std::uint32_t case_index, std::uint32_t checksum,
                            std::uint32_t expected) {
  return "case " + std::to_string(case_index) + ": checksum " + Hex(checksum) + ", expected " +
         Hex(expected);
}

RunVerdict JudgeRun(const RunVerdictInput& in, std::span<const CaseResult> results,
                    std::span<const CaseStats> stats) {
  RunVerdict v;
  std::vector<std::string> failures = in.reported_failures;
  for (const CaseResult& c : results) {
    if (c.ok || in.custom_runner) continue;
    std::string f = ChecksumFailure(c.case_index, c.checksum, c.expected);
    if (std::find(failures.begin(), failures.end(), f) == failures.end()) failures.push_back(f);
  }
  if (!failures.empty()) {
    v.wrong_result = true;
    v.message = "wrong result (checksum mismatch): " + JoinFlags(failures);
    return v;
  }
  std::map<std::uint32_t, std::uint64_t> timer_n;
  for (const CaseStats& s : stats) {
    if (s.metric_index == 0) timer_n[s.case_index] = s.n;
  }
  std::vector<bool> reported(in.num_cases, false);
  for (const CaseResult& c : results) {
    if (c.case_index < reported.size()) reported[c.case_index] = true;
  }
  std::vector<std::string> flags;
  for (std::uint32_t i = 0; i < in.num_cases; ++i) {
    const std::uint64_t n = timer_n.contains(i) ? timer_n[i] : 0;
    if (n != in.iterations) {
      flags.push_back("case " + std::to_string(i) + ": " + std::to_string(n) + " of " +
                      std::to_string(in.iterations) + " iterations stored");
    }
    if (!reported[i]) flags.push_back("case " + std::to_string(i) + ": no checksum reported");
  }
  if (in.passes >= 2) {
    const PassAgreement agreement =
        CheckPassAgreement(in.cycles_by_pass, in.pass_tolerance, in.emulated);
    if (std::string f = agreement.Summary(); !f.empty()) flags.push_back(f);
  }
  if (in.custom_runner) flags.push_back("checksums not verified (custom firmware)");
  v.message = JoinFlags(flags);
  return v;
}

}  // namespace mculab::server
