// What the job page shows while a job waits or runs, as pure functions (tested in node,
// tests/web/unit/job_live.test.mjs): why a queued job waits, the live series of the running case
// (the `samples` events of /api/v1/events?job=ID), and the counter events grouped per case.
import { formatDuration, formatTime, paramsText } from './format.js';

// The live plot keeps at most this many points: past it, every other point is dropped (the
// stored values replace the preview when the case finishes).
export const MAX_LIVE_POINTS = 2000;

// "Waiting for board an547-0, reserved by alice until 2026-12-01 18:00:00 (calibration). Queue
// position 1. Estimated start 2026-12-01 18:00:00 (in about 5 min)." from a job's `wait`.
export function waitText(wait, nowMs) {
  if (!wait || !(wait.position > 0)) return '';
  const parts = [];
  if (wait.board) {
    parts.push(`Waiting for board ${wait.board}, reserved by ${wait.holder} until ` +
        `${formatTime(wait.lease_until_ms)}${wait.note ? ` (${wait.note})` : ''}.`);
  }
  parts.push(wait.position === 1 ? 'Next in the queue.' : `Queue position ${wait.position}.`);
  if (wait.estimated_start_ms > 0) {
    const inMs = wait.estimated_start_ms - nowMs;
    parts.push(`Estimated start ${formatTime(wait.estimated_start_ms)}` +
        (inMs > 1000 ? ` (in about ${formatDuration(inMs).replace(/ \d+ (s|min)$/, '')}).` : ' (any moment now).'));
  } else {
    parts.push('No estimate yet (no recent run of this kind and op).');
  }
  return parts.join(' ');
}

// The values of the case that is running, as `samples` events bring them: ascending iterations,
// at most `max` points; a new case starts a new series.
export class LiveSeries {
  constructor(max = MAX_LIVE_POINTS) {
    this.max = max;
    this.reset(null);
  }

  reset(caseIndex) {
    this.caseIndex = caseIndex;
    this.x = [];
    this.y = [];
    this.received = 0;  // values the events brought for this case (before thinning)
  }

  // ev: {id, case, iterations, values}. Returns whether the series changed.
  add(ev) {
    if (!ev || !Array.isArray(ev.iterations) || !Array.isArray(ev.values)) return false;
    if (ev.case !== this.caseIndex) this.reset(ev.case);
    let changed = false;
    const n = Math.min(ev.iterations.length, ev.values.length);
    for (let i = 0; i < n; i++) {
      const it = ev.iterations[i];
      const v = ev.values[i];
      if (typeof it !== 'number' || typeof v !== 'number') continue;
      // A resent batch (after a reconnect) repeats iterations: keep x ascending.
      if (this.x.length > 0 && it <= this.x[this.x.length - 1]) continue;
      this.x.push(it);
      this.y.push(v);
      this.received += 1;
      changed = true;
    }
    if (this.x.length > this.max) {
      this.x = this.x.filter((_, i) => i % 2 === 0);
      this.y = this.y.filter((_, i) => i % 2 === 0);
    }
    return changed;
  }
}

// The job's counter events as `mculab show` prints them: one group per case (its id and
// parameters), one row per event with its pass and statistics.
export function eventsByCase(detail) {
  const events = Array.isArray(detail && detail.events) ? detail.events : [];
  const groups = new Map();
  for (const e of events) {
    if (!groups.has(e.case)) {
      groups.set(e.case, {
        case: e.case,
        id: e.id,
        params: paramsText(detail.param_names, e.params),
        rows: [],
      });
    }
    groups.get(e.case).rows.push(e);
  }
  return [...groups.values()].sort((a, b) => a.case - b.case);
}
