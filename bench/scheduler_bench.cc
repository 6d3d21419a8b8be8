// One scheduling pass as the Lab runs it (server/service/scheduling.cc ScheduleLocked): the
// Lab's own Dispatcher over its job and board tables (dispatcher.h: the queued jobs' views grouped
// by user and priority, kept while they wait, the boards' slots, kept between passes, each user's
// share, Schedule()), then each placement's pass plan from the Lab's plan cache (PassPlanCache),
// copied as AssignLocked copies it. A lab of 500 boards (5 kinds, tags, 1 in 10 reserved by a
// user, 1 in 17 of unknown health) with 10,000 jobs queued by 20 users at three priorities (1 in 5
// asking for tags, 1 in 20 naming a board), each job asking for 4 events.
//
// Cases: few boards free (the usual state of a busy lab: each finished run frees one), every
// board free (the worst case: 500 placements), and the domain pass alone. DESIGN.md target:
// < 1 ms per pass. MCULAB_BENCH_QUEUED / MCULAB_BENCH_BOARDS change the size (bench/run.sh
// --quick uses tiny ones).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "server/domain/job.h"
#include "server/domain/pass_planner.h"
#include "server/domain/scheduler.h"
#include "server/service/board_table.h"
#include "server/service/dispatcher.h"
#include "server/service/job_table.h"

namespace mculab::server {
namespace {

std::size_t EnvSize(const char* name, std::size_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

const char* const kKinds[] = {"corstone300-qemu", "an500-qemu", "host", "nucleo-h743",
                              "corstone300-fvp"};
constexpr std::int64_t kNow = 1'000'000;

struct Lab {
  std::vector<Job> jobs;
  std::map<JobId, QueuedJob> queue;  // the Lab's kept views of its queued jobs (Lab::queue_)
  std::vector<Board> boards;
  std::vector<UserShare> users;
};

// `free_every`: about one board in free_every is free (idle, or reserved and not in use); the
// others are busy. Board and job properties are drawn from a fixed seed, so every run sees the
// same lab.
Lab MakeLab(std::size_t queued, std::size_t boards, std::size_t free_every) {
  Lab lab;
  std::mt19937 rng(42);
  auto one_in = [&](std::uint32_t n) { return rng() % n == 0; };
  for (std::size_t i = 0; i < boards; ++i) {
    Board b;
    b.name = std::string(kKinds[i % 5]) + "-" + std::to_string(i / 5);
    b.kind = kKinds[i % 5];
    b.agent = "agent-" + std::to_string(i / 50);
    b.tags["cpu"] = one_in(2) ? "cortex-m55" : "cortex-m7";
    if (one_in(3)) b.tags["npu"] = "ethos-u55-128";
    b.state =
        one_in(static_cast<std::uint32_t>(free_every)) ? BoardState::kIdle : BoardState::kBusy;
    b.health = one_in(17) ? BoardHealth::kUnknown : BoardHealth::kGood;
    if (one_in(10)) {
      b.holder = "user" + std::to_string(rng() % 20);
      b.lease_until_ms = kNow + 60'000;
      if (b.state == BoardState::kIdle) b.state = BoardState::kReserved;
    }
    lab.boards.push_back(std::move(b));
  }
  for (std::size_t i = 0; i < queued; ++i) {
    Job j;
    j.id = static_cast<JobId>(i + 1);
    j.user = "user" + std::to_string(rng() % 20);
    j.kind = kKinds[rng() % 5];
    j.op = "conv2d_s8";
    j.priority =
        one_in(7) ? JobPriority::kHigh : (one_in(5) ? JobPriority::kLow : JobPriority::kNormal);
    if (one_in(5)) j.tags["cpu"] = "cortex-m55";
    if (one_in(20) && boards > 0) {
      const Board& b = lab.boards[rng() % boards];
      j.board = b.name;
      j.kind = b.kind;
    }
    lab.jobs.push_back(std::move(j));
  }
  for (const Job& j : lab.jobs) lab.queue.emplace(j.id, QueuedOf(j));
  for (int u = 0; u < 20; ++u) {
    lab.users.push_back(
        UserShare{"user" + std::to_string(u), static_cast<std::uint32_t>(u % 4), kNow - 1000 * u});
  }
  return lab;
}

const std::vector<CounterUnit>& Units() {
  static const std::vector<CounterUnit> units = {
      {"cortex-m55-pmu", 4, {"instructions", "loads", "stores", "branches", "mve_insts"}, true},
      {"ethos-u-pmu", 4, {"npu_active", "axi0_reads", "axi1_reads"}, true}};
  return units;
}

const std::vector<std::string>& Requested() {
  static const std::vector<std::string> requested = {"instructions", "loads", "stores",
                                                     "npu_active"};
  return requested;
}

// The Lab's state for the same lab: its job table (the queue, and each user's jobs on boards),
// its board table with every board's counter units, its Dispatcher and its plan cache.
struct LabTables {
  explicit LabTables(const Lab& lab) {
    for (const Board& b : lab.boards) {
      boards.Add(b);
      boards.SetUnits(BoardUnits{b.name, Units(), std::vector<bool>(Units().size(), false)});
    }
    for (const Job& j : lab.jobs) {
      ActiveJob aj;
      aj.job = j;
      aj.job.state = JobState::kQueued;
      aj.events = Requested();
      jobs.Add(std::move(aj));
    }
    // Each user's share: jobs on boards and when the user was last served, as lab.users says.
    for (const UserShare& u : lab.users) {
      for (std::uint32_t n = 0; n < u.on_boards; ++n) {
        ActiveJob running;
        running.job.id = jobs.TakeId();
        running.job.user = u.user;
        running.job.state = JobState::kRunning;
        jobs.Add(std::move(running));
      }
      dispatch.Assigned(u.user, u.last_assigned_ms);
    }
  }
  JobTable jobs;
  BoardTable boards;
  Dispatcher dispatch{jobs, boards, /*health_checks=*/true};
  PassPlanCache plans;
};

std::size_t OnePass(LabTables& lab) {
  std::int64_t recheck = kNoDeadline;
  const auto placements = lab.dispatch.Plan(kNow, recheck);
  if (!placements) return 0;
  std::size_t passes = 0;
  for (const Placement& p : *placements) {
    const ActiveJob* aj = lab.jobs.Find(p.job);
    const Result<PassPlan>& planned = lab.plans.Plan(aj->events, lab.boards.UnitsOf(p.board));
    if (!planned.ok()) continue;
    PassPlan plan = *planned;
    passes += plan.passes.size();
  }
  return placements->size() + passes;
}

void Run(benchmark::State& state, std::size_t free_every) {
  const Lab lab = MakeLab(EnvSize("MCULAB_BENCH_QUEUED", 10'000),
                          EnvSize("MCULAB_BENCH_BOARDS", 500), free_every);
  LabTables tables(lab);
  std::size_t placed = 0;
  for (auto _ : state) {
    placed = OnePass(tables);
    benchmark::DoNotOptimize(placed);
  }
  state.counters["queued"] = static_cast<double>(lab.jobs.size());
  state.counters["boards"] = static_cast<double>(lab.boards.size());
  std::int64_t recheck = kNoDeadline;
  const auto placements = tables.dispatch.Plan(kNow, recheck);
  state.counters["placed"] = static_cast<double>(placements ? placements->size() : 0);
}

// A busy lab: one board in 50 free.
void BM_LabPassFewFree(benchmark::State& state) { Run(state, 50); }
// Every board free: the most placements one pass can make.
void BM_LabPassAllFree(benchmark::State& state) { Run(state, 1); }

// Schedule() alone over a plain queue, its inputs built once (it groups the queue each call).
void BM_ScheduleOnly(benchmark::State& state) {
  const Lab lab = MakeLab(EnvSize("MCULAB_BENCH_QUEUED", 10'000),
                          EnvSize("MCULAB_BENCH_BOARDS", 500), state.range(0));
  std::vector<QueuedJob> queued;
  for (const Job& j : lab.jobs) queued.push_back(QueuedOf(j));
  std::vector<BoardSlot> slots;
  for (const Board& b : lab.boards) slots.push_back(SlotOf(b));
  for (auto _ : state) {
    auto placements = Schedule(queued, slots, kNow, lab.users);
    benchmark::DoNotOptimize(placements);
  }
}

// Schedule() over the queue grouped once, as the JobTable keeps it between passes.
void BM_ScheduleGrouped(benchmark::State& state) {
  const Lab lab = MakeLab(EnvSize("MCULAB_BENCH_QUEUED", 10'000),
                          EnvSize("MCULAB_BENCH_BOARDS", 500), state.range(0));
  std::vector<QueuedJob> queued;
  for (const Job& j : lab.jobs) queued.push_back(QueuedOf(j));
  std::vector<const QueuedJob*> views;
  for (const QueuedJob& q : queued) views.push_back(&q);
  const QueueGroups groups(views);
  std::vector<BoardSlot> slots;
  for (const Board& b : lab.boards) slots.push_back(SlotOf(b));
  for (auto _ : state) {
    auto placements = Schedule(groups, slots, kNow, lab.users);
    benchmark::DoNotOptimize(placements);
  }
}

BENCHMARK(BM_LabPassFewFree)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_LabPassAllFree)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ScheduleOnly)->Arg(50)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ScheduleGrouped)->Arg(50)->Arg(1)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace mculab::server

BENCHMARK_MAIN();
