#include "cli/profile_format.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <tuple>
#include <vector>

#include "cli/format.h"
#include "common/bytes_text.h"
#include "common/lists.h"

namespace mculab::cli {
namespace {

std::string Label(const mculab::v1::Provenance& p) { return MeasuredLabel(p.measured()); }

std::string Bytes(std::uint64_t b) {
  std::string s = std::to_string(b);
  if (b >= 1024) s += " (" + HumanBytes(b) + ")";
  return s;
}

// The pass that counted each event.
std::map<std::string, std::uint32_t> PassOfEvent(const mculab::v1::Results& r) {
  std::map<std::string, std::uint32_t> out;
  for (const auto& p : r.passes()) {
    for (const auto& e : p.events()) {
      if (e != "cycles") out.emplace(e, p.index());
    }
  }
  return out;
}

}  // namespace

std::string RenderEventStats(const mculab::v1::Results& r) {
  if (r.counters_size() == 0) return "";
  const bool emulated = r.provenance().emulated();
  const auto pass_of = PassOfEvent(r);
  std::ostringstream out;
  out << "\nevents (" << Label(r.provenance())
      << (emulated ? ": counted by the emulator, not a silicon PMU" : "") << "; "
      << std::max(1, r.passes_size()) << (r.passes_size() > 1 ? " passes" : " pass")
      << ", cycles in every pass)\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : r.counters()) {
    auto p = pass_of.find(c.metric());
    rows.push_back({std::to_string(c.case_id()), c.metric(),
                    p == pass_of.end() ? "-" : std::to_string(p->second), std::to_string(c.n()),
                    FormatNumber(c.min()), FormatNumber(c.median()), FormatNumber(c.max()),
                    FormatNumber(c.cv() * 100.0) + "%"});
  }
  out << RenderTable({"case", "event", "pass", "n", "min", "median", "max", "cv"}, rows);
  return out.str();
}

std::string RenderMemory(const mculab::v1::Results& r) {
  if (r.memory_size() == 0) return "";
  const bool emulated = r.provenance().emulated();
  std::ostringstream out;
  std::vector<std::vector<std::string>> elf;
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> runner;
  for (const auto& m : r.memory()) {
    if (m.source() == "elf") {
      elf.push_back({m.category(), Bytes(m.used())});
    } else {
      auto& [used, reserved] = runner[m.category()];
      used = std::max<std::uint64_t>(used, m.used());
      reserved = std::max<std::uint64_t>(reserved, m.reserved());
    }
  }
  out << "\nmemory" << (emulated ? " (EMULATED board; sizes are the firmware's own)" : "") << "\n";
  if (!elf.empty()) {
    out << "runner ELF sections:\n" << RenderTable({"category", "bytes"}, elf);
  }
  if (!runner.empty()) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& [category, v] : runner) {
      const double pct = v.second > 0 ? 100.0 * static_cast<double>(v.first) / v.second : 0;
      rows.push_back({category, Bytes(v.first), Bytes(v.second),
                      v.second > 0 ? FormatNumber(pct) + "%" : "-"});
    }
    out << "runner reports (largest over the cases):\n"
        << RenderTable({"category", "used", "reserved", "use"}, rows);
  }
  return out.str();
}

std::string RenderOps(const mculab::v1::Results& r) {
  const bool emulated = r.provenance().emulated();
  const std::string timer =
      r.provenance().timer_unit().empty() ? "ticks" : r.provenance().timer_unit();
  struct Agg {
    std::string type, name;
    std::uint64_t calls = 0;
    double total = 0, min = -1, max = 0;
    std::map<std::string, double> events;
    bool unclosed = false;
  };
  std::map<std::uint32_t, Agg> ops;  // by op index
  std::vector<std::string> event_names;
  double grand = 0;
  for (const auto& o : r.ops()) {
    Agg& a = ops[o.op_index()];
    a.type = o.type();
    a.name = o.name();
    a.unclosed = a.unclosed || o.unclosed();
    if (o.metric() == timer || o.metric() == "cycles" || o.metric() == "ns") {
      if (o.pass() != 0) continue;
      a.calls += o.count();
      a.total += o.sum();
      a.min = a.min < 0 ? o.min() : std::min(a.min, o.min());
      a.max = std::max(a.max, o.max());
      grand += o.sum();
    } else {
      a.events[o.metric()] += o.sum();
      if (std::find(event_names.begin(), event_names.end(), o.metric()) == event_names.end()) {
        event_names.push_back(o.metric());
      }
    }
  }
  if (ops.empty()) {
    return "job " + std::to_string(r.job().id()) +
           " has no per-op profile (the runner reported no OP_SAMPLE)\n";
  }
  std::vector<std::pair<std::uint32_t, const Agg*>> order;
  for (const auto& [index, a] : ops) order.push_back({index, &a});
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& x, const auto& y) { return x.second->total > y.second->total; });
  std::ostringstream out;
  out << "per-op profile of job " << r.job().id() << " (" << Label(r.provenance()) << ", " << timer
      << ", summed over " << r.cases_size() << (r.cases_size() == 1 ? " case" : " cases") << ")\n";
  std::vector<std::string> header = {"share", "total", "calls", "mean", "min",
                                     "max",   "op",    "type",  "name"};
  for (const auto& e : event_names) header.push_back(e);
  std::vector<std::vector<std::string>> rows;
  for (const auto& [index, a] : order) {
    std::vector<std::string> row = {grand > 0 ? FormatNumber(100.0 * a->total / grand) + "%" : "-",
                                    FormatNumber(a->total),
                                    std::to_string(a->calls),
                                    a->calls ? FormatNumber(a->total / a->calls) : "-",
                                    FormatNumber(a->min < 0 ? 0 : a->min),
                                    FormatNumber(a->max),
                                    std::to_string(index),
                                    a->type,
                                    a->name + (a->unclosed ? " (unclosed)" : "")};
    for (const auto& e : event_names) {
      auto it = a->events.find(e);
      row.push_back(it == a->events.end() ? "-" : FormatNumber(it->second));
    }
    rows.push_back(std::move(row));
  }
  out << RenderTable(header, rows);
  if (!event_names.empty() && emulated) out << "(events: EMULATED, counted by the emulator)\n";
  return out.str();
}

std::string RenderEventUnits(const mculab::v1::ListEventsReply& rep) {
  std::ostringstream out;
  out << "boards: ";
  for (int i = 0; i < rep.boards_size(); ++i) out << (i ? ", " : "") << rep.boards(i);
  const std::string& m = rep.measured();
  out << " ("
      << (m == "emulated" || (m.empty() && rep.emulated()) ? "EMULATED"
          : m == "host"                                    ? "HOST: a native process on the agent"
                                                           : "silicon")
      << ")\n";
  out << "cycles: the runner's timer, in every pass\n";
  if (rep.units_size() == 0) {
    out << "no counter units: these boards count nothing besides cycles\n";
    return out.str();
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& u : rep.units()) {
    rows.push_back({u.name(), std::to_string(u.max_simultaneous()),
                    u.emulated() ? "EMULATED" : "silicon",
                    JoinList(std::vector<std::string>(u.events().begin(), u.events().end()))});
  }
  out << RenderTable({"unit", "at once", "counted", "events"}, rows);
  out << "more events than a unit counts at once are split into passes run back to back\n";
  return out.str();
}

}  // namespace mculab::cli
