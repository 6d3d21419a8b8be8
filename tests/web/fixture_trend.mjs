// GET /api/v1/series for fixture_server.mjs: the document of docs/http-api.md over the fixture's
// succeeded jobs of one kind and op (the newest `limit`, at most 40, oldest first). The values are
// synthetic and shaped for the page's tests: a level for the older half, 20 % slower from the
// middle job on, where the runner's hash changes too, and that middle job as the one change
// point (the real detector is server/domain/change_points.h, tested in C++).
import { OPS, BOARD_KINDS, rng } from './fixture_data.mjs';

const RUNNER_A = 'a1'.repeat(32);
const RUNNER_B = 'b2'.repeat(32);

// {status, body}: 400 with an error naming what is missing, else the series.
export function seriesFor(lab, q) {
  const kind = q.get('kind') || '';
  const op = q.get('op') || '';
  const params = q.get('params') || '';
  const caseId = q.get('case');
  if (!kind) return { status: 400, body: { error: 'a series needs a board kind (kind)' } };
  if (!op) return { status: 400, body: { error: 'a series needs an op (op)' } };
  const opDef = OPS[op];
  if (opDef && !params) {
    return { status: 400, body: { error: `a series of ${op} needs the case's parameters (params: ${opDef.params.join(',')})` } };
  }
  if (!opDef && (caseId === null || caseId === '')) {
    return { status: 400, body: { error: 'a series needs the case\'s id (case) or parameters (params)' } };
  }
  if (opDef && params.split(',').length !== opDef.params.length) {
    return { status: 400, body: { error: `${op} has ${opDef.params.length} parameters (${opDef.params.join(',')}), got ${params.split(',').length}` } };
  }
  const index = opDef ? opDef.cases.findIndex(([, p]) => p.join(',') === params) : -1;
  const limit = Math.min(40, Number(q.get('limit') || 200));
  const label = (q.get('label') || '').toLowerCase();
  const matching = index < 0 ? [] : lab.jobs
    .filter((j) => j.kind === kind && j.op === op && j.state === 'succeeded' && (!label || j.label.toLowerCase().includes(label)))
    .sort((a, b) => a.created_ms - b.created_ms || a.id - b.id)
    .slice(-limit);
  const unit = BOARD_KINDS[kind] ? BOARD_KINDS[kind].unit : '';
  const half = Math.floor(matching.length / 2);
  const base = opDef && index >= 0 ? opDef.macs(opDef.cases[index][1]) * 0.5 + 400 : 1000;
  const jobs = matching.map((j, i) => {
    const r = rng(j.id * 31 + index);
    const level = i < half ? base : base * 1.2;
    const median = Math.round(level * (1 + (r() - 0.5) * 0.01));
    const spread = Math.round(level * 0.008);
    return {
      id: j.id, label: j.label, user: j.user, board: j.assigned_board, created_ms: j.created_ms, finished_ms: j.finished_ms,
      case_index: index, case_id: opDef.cases[index][0], n: j.iterations, median, lo: median - spread, hi: median + spread,
      unit, measured: j.measured, firmware_sha256: i < half ? RUNNER_A : RUNNER_B, runner_version: i < half ? '0.1.0' : '0.2.0',
      runner_name: '', runner_changed: i === half && half > 0,
    };
  });
  const changes = jobs.length >= 6 ? [{
    index: half, before_job: jobs[half - 1].id, after_job: jobs[half].id, before: base, after: base * 1.2, ratio: 1.2,
  }] : [];
  return {
    status: 200,
    body: {
      series: {
        kind, op, params: params ? params.split(',').map(Number) : null, param_names: opDef ? opDef.params : [],
        case: caseId ? Number(caseId) : null, runner: q.get('runner') || '', user: q.get('user') || '', label: q.get('label') || '',
        tags: {}, limit: Number(q.get('limit') || 200),
      },
      unit,
      detector: { window: Number(q.get('window') || 3), min_step: Number(q.get('min_step') || 0.01) },
      jobs,
      changes,
    },
  };
}

// GET /api/v1/changes: of the newest `scan` succeeded jobs matching the history's filters (user,
// kind, op, label), those that are the first job of a change point in their first case's series
// (as seriesFor draws them).
export function changedFor(lab, q, publicJob) {
  const scan = Math.min(500, Number(q.get('scan') || 200));
  const f = (name) => q.get(name) || '';
  const scanned = lab.jobs
    .filter((j) => j.state === 'succeeded' && (!f('user') || j.user === f('user')) && (!f('kind') || j.kind === f('kind')) &&
        (!f('op') || j.op === f('op')) && (!f('label') || j.label.toLowerCase().includes(f('label').toLowerCase())))
    .sort((a, b) => b.id - a.id)
    .slice(0, scan);
  const out = [];
  const seen = new Map();
  for (const j of scanned) {
    const opDef = OPS[j.op];
    const key = `${j.kind}|${j.op}`;
    if (!seen.has(key)) {
      const params = opDef.cases[0][1].join(',');
      const s = seriesFor(lab, new URLSearchParams({ kind: j.kind, op: j.op, params })).body;
      seen.set(key, { params: opDef.cases[0][1], caseId: opDef.cases[0][0], change: s.changes[0] || null });
    }
    const { params, caseId, change } = seen.get(key);
    if (change && change.after_job === j.id) {
      out.push({ ...publicJob(j), changes: [{ case_id: caseId, params,
        series: { kind: j.kind, op: j.op, params, case: null, runner: '' }, ...change }] });
    }
  }
  return { total: out.length, offset: 0, limit: out.length, scanned: scanned.length, truncated: false, jobs: out };
}
