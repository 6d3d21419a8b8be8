#include "server/wire/convert.h"

#include "common/lists.h"

namespace mculab::server::wire {

namespace v1 = mculab::v1;

SubmitRequest FromProto(const v1::SubmitJobRequest& m) {
  SubmitRequest r;
  r.kind = m.kind();
  r.board = m.board();
  r.op = m.op();
  r.cases.reserve(static_cast<std::size_t>(m.cases_size()));
  for (const auto& c : m.cases()) {
    r.cases.push_back(CaseSpec{c.id(), {c.params().begin(), c.params().end()}});
  }
  r.iterations = m.iterations();
  r.warmup = m.warmup();
  r.label = m.label();
  r.cases_artifact = m.cases_artifact();
  r.firmware_artifact = m.firmware_artifact();
  r.blob_artifact = m.blob_artifact();
  r.model_name = m.model_name();
  r.commit = m.commit();
  r.branch = m.branch();
  r.url = m.url();
  r.reruns = m.reruns();
  r.max_cv_pct = m.max_cv_pct();
  r.timeout_s = m.timeout_s();
  r.priority = ParseJobPriority(m.priority()).value_or(JobPriority::kNormal);
  r.events.assign(m.events().begin(), m.events().end());
  r.tags.insert(m.tags().begin(), m.tags().end());
  r.kernels = m.kernels();
  return r;
}

JobQuery FromProto(const v1::ListJobsRequest& m) {
  JobQuery q;
  q.states = SplitList(m.state());
  q.kind = m.kind();
  q.board = m.board();
  q.op = m.op();
  q.user = m.user();
  q.label_contains = m.label();
  q.model = m.model();
  q.branch = m.branch();
  q.commit = m.commit();
  if (m.limit() != 0) q.limit = m.limit();
  q.offset = m.offset();
  q.before_id = static_cast<JobId>(m.before_id());
  return q;
}

void ToProto(const BoardView& v, v1::Board* out) {
  const Board& b = v.board;
  out->set_name(b.name);
  out->set_kind(b.kind);
  out->set_agent(b.agent);
  out->set_state(std::string(BoardStateName(b.state)));
  out->set_health(std::string(BoardHealthName(b.health)));
  for (const auto& [k, val] : b.tags) (*out->mutable_tags())[k] = val;
  out->set_emulated(b.emulated);
  out->set_measured(std::string(MeasuredOfBoard(b.emulated, IsHostBoard(b))));
  out->set_queue_length(v.queue_length);
  out->set_current_job(static_cast<std::uint64_t>(b.current_job));
  out->set_ram_bytes(b.ram_bytes);
  out->set_holder(b.holder);
  out->set_lease_until_ms(b.lease_until_ms);
  out->set_reservation_note(b.reservation_note);
  out->set_kind_queue_length(v.kind_queue_length);
  out->set_hold(b.hold);
  out->set_health_failures(b.health_failures);
  out->set_awaiting_approval(!b.approved);
}

void ToProto(const BoardTransition& t, v1::BoardTransition* out) {
  out->set_board(t.board);
  out->set_field(t.field);
  out->set_from(t.from);
  out->set_to(t.to);
  out->set_reason(t.reason);
  out->set_actor(t.actor);
  out->set_time_ms(t.time_ms);
}

void ToProto(const QueueWait& w, v1::QueueWait* out) {
  out->set_position(w.position);
  out->set_board(w.board);
  out->set_holder(w.holder);
  out->set_lease_until_ms(w.lease_until_ms);
  out->set_note(w.note);
  out->set_estimated_start_ms(w.estimated_start_ms);
}

void ToProto(const Job& j, v1::Job* out) {
  out->set_id(static_cast<std::uint64_t>(j.id));
  out->set_user(j.user);
  out->set_kind(j.kind);
  out->set_board(j.board);
  out->set_assigned_board(j.assigned_board);
  out->set_op(j.op);
  out->set_label(j.label);
  out->set_state(std::string(JobStateName(j.state)));
  out->set_iterations(j.iterations);
  out->set_warmup(j.warmup);
  out->set_num_cases(j.num_cases);
  out->set_created_ms(j.created_ms);
  out->set_started_ms(j.started_ms);
  out->set_finished_ms(j.finished_ms);
  out->set_message(j.message);
  const auto total = j.ProgressTotal();
  out->set_progress_done(static_cast<std::uint32_t>(std::min(j.progress_done, total)));
  out->set_progress_total(static_cast<std::uint32_t>(total));
  out->set_attempts(j.attempts);
  out->set_cases_artifact(j.cases_artifact);
  out->set_firmware_artifact(j.firmware_artifact);
  out->set_blob_artifact(j.blob_artifact);
  out->set_model_name(j.model_name);
  out->set_model_sha256(j.model_sha256);
  out->set_model_summary(j.model_summary);
  out->set_commit(j.commit);
  out->set_branch(j.branch);
  out->set_url(j.url);
  out->set_reruns(j.reruns);
  out->set_max_cv_pct(j.max_cv_pct);
  out->set_reruns_done(j.reruns_done);
  for (const auto& [k, val] : j.tags) (*out->mutable_tags())[k] = val;
  if (j.wait.position > 0) ToProto(j.wait, out->mutable_wait());
  out->set_priority(std::string(JobPriorityName(j.priority)));
  out->set_kernels(j.reference_kernels ? "reference" : "fast");
  out->set_kernel_set(j.kernel_set_ran);
}

void ToProto(const JobRow& row, v1::Job* out) {
  ToProto(row.job, out);
  out->set_emulated(row.emulated);
  out->set_measured(std::string(MeasuredOfBoard(row.emulated, row.host)));
}

void ToProto(const JobPage& page, const JobQuery& query, v1::ListJobsReply* out) {
  for (const JobRow& row : page.jobs) ToProto(row, out->add_jobs());
  out->set_total(page.total);
  out->set_offset(query.offset);
  out->set_limit(query.limit);
}

namespace {

// One cell per job: its figure and, when the ratios stand, its ratio and verdict.
void AddCells(const std::vector<std::optional<double>>& figures,
              const std::vector<std::optional<RatioInterval>>& ratios,
              const std::vector<std::string>& verdicts, bool ratios_stand,
              google::protobuf::RepeatedPtrField<v1::ComparedCell>* out,
              const std::vector<std::optional<Variation>>* variations = nullptr) {
  for (std::size_t k = 0; k < figures.size(); ++k) {
    v1::ComparedCell* cell = out->Add();
    cell->set_has_median(figures[k].has_value());
    cell->set_median(figures[k].value_or(0));
    if (variations != nullptr && k < variations->size() && (*variations)[k]) {
      const Variation& v = *(*variations)[k];
      v1::Variation* o = cell->mutable_variation();
      o->set_stability(v.stability);
      o->set_cv(v.cv);
      o->set_max_cv(v.max_cv);
      o->set_n(v.n);
      o->set_low_outliers(v.low_outliers);
      o->set_high_outliers(v.high_outliers);
      o->mutable_outlier_iterations()->Add(v.outlier_iterations.begin(),
                                           v.outlier_iterations.end());
      o->set_warmup(v.warmup);
    }
    const auto& r = k < ratios.size() ? ratios[k] : std::nullopt;
    if (!r || !ratios_stand) continue;
    cell->set_has_ratio(true);
    cell->set_ratio(r->ratio);
    cell->set_lo(r->lo);
    cell->set_hi(r->hi);
    cell->set_significant(r->significant);
    if (k < verdicts.size()) cell->set_verdict(verdicts[k]);
  }
}

}  // namespace

void ToProto(const Comparison& c, v1::Comparison* out) {
  for (const ComparedJob& j : c.jobs) {
    v1::ComparedJob* o = out->add_jobs();
    o->set_id(static_cast<std::uint64_t>(j.id));
    o->set_label(j.label);
    o->set_op(j.op);
    o->set_board(j.board);
    o->set_unit(j.unit);
    o->set_emulated(j.emulated);
    o->set_measured(j.measured);
    o->set_workload(j.workload);
    o->set_kernel_set(j.kernel_set);
    o->set_kind(j.kind);
    o->set_sha256(j.sha256);
  }
  for (const std::string& n : c.param_names) out->add_param_names(n);
  for (const ComparedCase& cc : c.cases) {
    v1::ComparedCase* o = out->add_cases();
    o->set_id(cc.id);
    o->mutable_params()->Add(cc.params.begin(), cc.params.end());
    o->set_refused(cc.refused);
    AddCells(cc.medians, cc.ratios, cc.verdicts, c.refused.empty(), o->mutable_cells(),
             &cc.variations);
  }
  for (const ComparedLayer& l : c.layers) {
    v1::ComparedLayer* o = out->add_layers();
    o->set_case_id(l.case_id);
    o->set_op_index(l.op_index);
    o->set_type(l.type);
    o->set_name(l.name);
    AddCells(l.means, l.ratios, l.verdicts, c.refused.empty(), o->mutable_cells());
  }
  out->set_ratio_refused(c.refused);
  out->set_verdict_refused(c.refused.empty() ? c.no_verdict : std::string());
}

void ToProto(const Trend& t, v1::Series* out) {
  v1::GetSeriesRequest* r = out->mutable_request();
  const SeriesQuery& q = t.query;
  r->set_kind(q.kind);
  r->set_op(q.op);
  r->set_has_params(q.params.has_value());
  if (q.params) r->mutable_params()->Add(q.params->begin(), q.params->end());
  r->set_has_case_id(q.case_id.has_value());
  r->set_case_id(q.case_id.value_or(0));
  r->set_runner(q.runner);
  r->set_model(q.model);
  r->set_user(q.user);
  r->set_label(q.label_contains);
  for (const auto& [k, v] : q.tags) (*r->mutable_tags())[k] = v;
  r->set_limit(q.limit);
  r->set_window(static_cast<std::uint32_t>(t.detector.window));
  r->set_min_step(t.detector.min_relative_step);
  for (const std::string& n : t.param_names) out->add_param_names(n);
  out->set_unit(t.unit);
  for (const TrendJob& j : t.jobs) {
    v1::SeriesJob* o = out->add_jobs();
    o->set_id(static_cast<std::uint64_t>(j.id));
    o->set_label(j.label);
    o->set_user(j.user);
    o->set_board(j.board);
    o->set_created_ms(j.created_ms);
    o->set_finished_ms(j.finished_ms);
    o->set_case_index(j.case_index);
    o->set_case_id(j.case_id);
    o->set_n(j.n);
    o->set_median(j.median);
    o->set_lo(j.lo);
    o->set_hi(j.hi);
    o->set_unit(j.unit);
    o->set_emulated(j.emulated);
    o->set_measured(j.measured);
    o->set_port(j.port);
    o->set_firmware_sha256(j.firmware_sha256);
    o->set_runner_version(j.runner_version);
    o->set_runner_name(j.runner_name);
    o->set_runner_changed(j.runner_changed);
    o->set_model_sha256(j.model_sha256);
    o->set_commit(j.commit);
    o->set_branch(j.branch);
    o->set_model_changed(j.model_changed);
  }
  for (const TrendChange& c : t.changes) {
    v1::SeriesChange* o = out->add_changes();
    o->set_index(static_cast<std::uint32_t>(c.index));
    o->set_before_job(static_cast<std::uint64_t>(c.before_job));
    o->set_after_job(static_cast<std::uint64_t>(c.after_job));
    o->set_before(c.before);
    o->set_after(c.after);
    o->set_ratio(c.ratio);
  }
}

void ToProto(const JobEvent& e, v1::JobEvent* out) {
  out->set_job_id(static_cast<std::uint64_t>(e.job_id));
  out->set_state(std::string(JobStateName(e.state)));
  out->set_message(e.message);
  out->set_progress_done(static_cast<std::uint32_t>(e.progress_done));
  out->set_progress_total(static_cast<std::uint32_t>(e.progress_total));
  out->set_board(e.board);
  out->set_time_ms(e.time_ms);
}

void ToProto(const SubmitReply& r, v1::SubmitJobReply* out) {
  out->set_id(static_cast<std::uint64_t>(r.id));
  out->set_state(std::string(JobStateName(r.state)));
  out->set_queue_position(r.queue_position);
  out->set_estimated_start_ms(r.estimated_start_ms);
  if (r.wait.position > 0) ToProto(r.wait, out->mutable_wait());
}

void ToProto(const JobResults& r, v1::Results* out) {
  ToProto(r.job, out->mutable_job());
  out->set_emulated(r.emulated);
  out->set_measured(r.measured);
  out->set_runner_name(r.runner_name);
  if (r.run && r.run->started) {  // before its runner's HELLO, a run has no provenance
    const Run& run = *r.run;
    const Provenance& p = run.provenance;
    auto* pv = out->mutable_provenance();
    pv->set_board(run.board);
    pv->set_board_kind(r.job.kind);
    pv->set_board_serial(p.board_serial);
    pv->set_agent(run.agent);
    pv->set_runner_version(p.runner_version);
    pv->set_firmware_sha256(p.firmware_sha256);
    pv->set_workload_sha256(p.workload_sha256);
    pv->set_toolchain(p.toolchain);
    pv->set_clock_hz(p.clock_hz);
    pv->set_port(p.port);
    pv->set_cpu(p.cpu);
    pv->set_emulated(p.emulated);
    pv->set_timer_unit(p.timer_unit);
    for (const auto& c : p.counters) pv->add_counters(c);
    pv->set_note(p.note);
    pv->set_seed(p.seed);
    pv->set_kernel_set(p.kernel_set);
    pv->set_measured(std::string(MeasuredOfRun(p)));
    out->mutable_job()->set_kernel_set(p.kernel_set);  // the latest run's, as the job list says
  }
  const bool verified = r.job.firmware_artifact.empty();  // no reference for a custom runner
  auto fill = [verified](const CaseOutcome& c, const CaseStats* s, v1::CaseStats* cs) {
    cs->set_index(c.index);
    cs->set_checksum_verified(verified);
    cs->set_case_id(c.case_id);
    for (std::int32_t p : c.params) cs->add_params(p);
    if (c.result) {
      cs->set_checksum_reported(true);
      cs->set_checksum_ok(c.result->ok);
      cs->set_checksum(c.result->checksum);
      cs->set_overhead(static_cast<double>(c.result->overhead));
    }
    if (s == nullptr) return;
    cs->set_metric(s->metric);
    cs->set_unit(s->unit);
    cs->set_n(s->n);
    cs->set_min(s->min);
    cs->set_median(s->median);
    cs->set_mean(s->mean);
    cs->set_p90(s->p90);
    cs->set_p99(s->p99);
    cs->set_stddev(s->stddev);
    cs->set_cv(s->cv);
    cs->set_max(s->max);
  };
  // cases: one per case with the timer's statistics; counters: every other metric.
  for (const CaseOutcome& c : r.cases) {
    const CaseStats* timer = nullptr;
    for (const CaseStats& s : c.stats) {
      if (s.metric_index == 0) {
        timer = &s;
      } else {
        fill(c, &s, out->add_counters());
      }
    }
    fill(c, timer, out->add_cases());
  }
  for (const RawSeries& s : r.samples) {
    auto* rs = out->add_samples();
    rs->set_case_index(s.case_index);
    rs->set_metric(s.metric);
    rs->mutable_values()->Reserve(static_cast<int>(s.values.size()));
    for (std::int64_t v : s.values) rs->add_values(v);
  }
  for (const auto& n : r.param_names) out->add_param_names(n);
  // Events, passes, op profiles (metric named as the run's), memory.
  for (const auto& e : r.events) out->mutable_job()->add_events(e);
  for (const RunPass& p : r.passes) {
    auto* pi = out->add_passes();
    pi->set_index(p.pass);
    for (const auto& e : p.events) pi->add_events(e);
  }
  for (const OpProfileRow& o : r.ops) {
    auto* os = out->add_ops();
    os->set_case_index(o.case_index);
    os->set_op_index(o.op_index);
    os->set_type(o.type);
    os->set_name(o.name);
    os->set_metric(r.run ? MetricName(r.run->provenance, o.metric) : std::to_string(o.metric));
    os->set_count(o.count);
    os->set_sum(static_cast<double>(o.sum));
    os->set_min(static_cast<double>(o.min));
    os->set_max(static_cast<double>(o.max));
    os->set_unclosed(o.unclosed);
    os->set_pass(o.pass);
    os->set_timer(o.metric == 0);
  }
  for (const MemoryFigure& m : r.memory) {
    auto* ms = out->add_memory();
    ms->set_case_index(m.case_index);
    ms->set_source(m.source);
    ms->set_category(m.category);
    ms->set_used(m.used);
    ms->set_reserved(m.reserved);
  }
}

void ToProto(const EventsView& v, v1::ListEventsReply* out) {
  for (const auto& b : v.boards) out->add_boards(b);
  out->set_emulated(v.emulated);
  out->set_measured(v.measured);
  for (std::size_t i = 0; i < v.units.units.size(); ++i) {
    const CounterUnit& u = v.units.units[i];
    auto* eu = out->add_units();
    eu->set_name(u.name);
    eu->set_max_simultaneous(u.max_simultaneous);
    for (const auto& e : u.events) eu->add_events(e);
    eu->set_emulated(i < v.units.emulated.size() && v.units.emulated[i]);
  }
  for (const auto& e : v.countable) out->add_countable(e);
}

}  // namespace mculab::server::wire
