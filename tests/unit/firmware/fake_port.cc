#include "fake_port.h"

#include <cstdlib>

#include "port.h"

namespace mculab::test_support {
namespace {
FakePort* g_port = nullptr;
}  // namespace

FakePort& Port() {
  if (g_port == nullptr) g_port = new FakePort();
  return *g_port;
}

void ResetPort() {
  delete g_port;
  g_port = new FakePort();
}

FakeUnit::FakeUnit(std::string name, std::uint8_t max_simultaneous,
                   std::vector<mculab_event> events, std::uint8_t flags)
    : name_(std::move(name)), events_(std::move(events)) {
  unit_.name = name_.c_str();
  unit_.max_simultaneous = max_simultaneous;
  unit_.flags = flags;
  unit_.num_events = static_cast<std::uint8_t>(events_.size());
  unit_.events = events_.data();
  if (!(flags & MCULAB_UNIT_EXTERNAL)) {
    unit_.select = Select;
    unit_.start = Start;
    unit_.stop = Stop;
    unit_.read = Read;
  }
  unit_.driver = this;
}

int FakeUnit::Select(mculab_counter_unit* u, const std::uint16_t* ids, unsigned n) {
  auto* self = static_cast<FakeUnit*>(u->driver);
  self->calls.push_back("select");
  if (self->refuse_select) return -1;
  self->selected.assign(ids, ids + n);
  return 0;
}

void FakeUnit::Start(mculab_counter_unit* u) {
  auto* self = static_cast<FakeUnit*>(u->driver);
  self->started_ = Port().now;
  self->running_ = true;
  self->calls.push_back("start@" + std::to_string(Port().now));
}

void FakeUnit::Stop(mculab_counter_unit* u) {
  auto* self = static_cast<FakeUnit*>(u->driver);
  self->stopped_ = Port().now;
  self->running_ = false;
  self->calls.push_back("stop@" + std::to_string(Port().now));
}

void FakeUnit::Read(mculab_counter_unit* u, std::uint64_t* values) {
  auto* self = static_cast<FakeUnit*>(u->driver);
  const std::uint64_t ticks = (self->running_ ? Port().now : self->stopped_) - self->started_;
  for (std::size_t k = 0; k < self->selected.size(); ++k) values[k] = ticks * self->selected[k];
}

}  // namespace mculab::test_support

using mculab::test_support::Port;

extern "C" {

volatile std::uint32_t mculab_marker_region[MCULAB_MARKER_WORDS];

void mculab_port_init(mculab_port_info* info) {
  auto& p = Port();
  *info = mculab_port_info{};
  info->port = "fake";
  info->cpu = "test";
  info->flags = p.emulated ? MCULAB_HELLO_EMULATED : 0;
  info->timer_unit = MCULAB_TIMER_CYCLES;
  info->clock_hz = 1000000;
  info->workload = p.workload.empty() ? nullptr : p.workload.data();
  info->workload_max = p.workload.size();
  info->workload_error = p.workload.empty() ? "no workload in this test" : nullptr;
  info->arena = p.arena.data();
  info->arena_bytes = p.arena.size();
  for (auto* u : p.units) info->units[info->num_units++] = u;
}

int mculab_port_write(const std::uint8_t* data, std::size_t len) {
  Port().from_runner.insert(Port().from_runner.end(), data, data + len);
  return 0;
}

int mculab_port_poll_byte(void) {
  auto& p = Port();
  if (p.read_pos < p.poll_from || p.read_pos >= p.to_runner.size()) return -1;
  return p.to_runner[p.read_pos++];
}

int mculab_port_read_byte(void) {
  auto& p = Port();
  if (p.read_pos >= p.to_runner.size()) return -1;
  return p.to_runner[p.read_pos++];
}

void mculab_port_timer_align(void) { ++Port().aligns; }

std::uint64_t mculab_port_timer_now(void) {
  ++Port().timer_reads;
  return Port().now++;
}

void mculab_port_exit(int status) { std::exit(status); }

}  // extern "C"
