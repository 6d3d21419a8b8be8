#!/usr/bin/env node
// A stand-in for mculab-server's HTTP side, for the web page's browser tests until the real
// routes exist: serves web/ as static files and answers the routes of docs/http-api.md from
// fixture_data.mjs, with the same security headers the real server must send.
//
//   node tests/web/fixture_server.mjs [--port 0] [--host 127.0.0.1] [--jobs 200] [--token T]
//
// Prints "fixture_server ready <url>" once listening (port 0 picks a free port). With a token
// (--token or $MCULAB_TOKEN) every route except /healthz and static files needs
// "Authorization: Bearer <token>", like the real server once accounts exist.
//
// Test-only controls (not part of the API): POST /__fixture/live?job=ID[&tick_ms=N&step=N]
// replays a job from "preparing" to "succeeded" with job, board and (to streams opened with
// ?job=ID) samples events;
// POST /__fixture/drop-events ends every event stream (the page must reconnect);
// GET /__fixture/ids names the special jobs' ids.
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { dirname, extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  OPS, BOARD_KINDS, bootstrapRatio, caseSamples, casesProgress, downsample, histogram, jobDetail,
  makeLab, provenanceOf, publicJob,
} from './fixture_data.mjs';
import { changedFor, seriesFor } from './fixture_trend.mjs';

export const CONTENT_SECURITY_POLICY = "default-src 'self'; script-src 'self'; style-src 'self'; " +
    "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

const SECURITY_HEADERS = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

const WEB_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'web');
const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};
// Never served, although under web/: build inputs and tooling.
const PRIVATE_SEGMENTS = new Set(['node_modules', 'scripts', 'package.json', 'package-lock.json']);

const JOB_STATES = ['queued', 'assigned', 'preparing', 'running', 'succeeded', 'failed', 'cancelled', 'timed_out'];
const SORTS = {
  id: (j) => j.id,
  created: (j) => j.created_ms,
  state: (j) => j.state,
  op: (j) => j.op,
  board: (j) => j.assigned_board || j.board,
  user: (j) => j.user,
};

class HttpError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

function parseArgs(argv) {
  const o = { port: 0, host: '127.0.0.1', jobs: 200, token: process.env.MCULAB_TOKEN || '' };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = argv[i + 1];
    if (a === '--port') { o.port = Number(v); i++; } else if (a === '--host') { o.host = v; i++; } else if (a === '--jobs') { o.jobs = Number(v); i++; } else if (a === '--token') { o.token = v; i++; } else throw new Error(`fixture_server: unknown option ${a}`);
  }
  return o;
}

function intParam(q, name, { min, max, fallback }) {
  const raw = q.get(name);
  if (raw === null || raw === '') return fallback;
  if (!/^-?[0-9]{1,16}$/.test(raw)) throw new HttpError(400, `${name} must be an integer, got "${raw}"`);
  const v = Number(raw);
  if (v < min || v > max) throw new HttpError(400, `${name} must be from ${min} to ${max}, got ${v}`);
  return v;
}

export function createLab(options) {
  const lab = makeLab({ count: options.jobs });
  const byId = new Map(lab.jobs.map((j) => [j.id, j]));
  const sortedCache = new Map();
  const compareCache = new Map();
  const streams = new Set();

  function sortedBy(key) {
    if (!sortedCache.has(key)) {
      const f = SORTS[key];
      const arr = lab.jobs.slice().sort((a, b) => {
        const x = f(a);
        const y = f(b);
        return x < y ? -1 : x > y ? 1 : a.id - b.id;
      });
      sortedCache.set(key, arr);
    }
    return sortedCache.get(key);
  }

  function listJobs(q) {
    const limit = intParam(q, 'limit', { min: 1, max: 500, fallback: 50 });
    const offset = intParam(q, 'offset', { min: 0, max: Number.MAX_SAFE_INTEGER, fallback: 0 });
    const from = intParam(q, 'from', { min: -8.64e15, max: 8.64e15, fallback: null });
    const to = intParam(q, 'to', { min: -8.64e15, max: 8.64e15, fallback: null });
    const sort = q.get('sort') || 'id';
    if (!SORTS[sort]) throw new HttpError(400, `sort must be one of ${Object.keys(SORTS).join(', ')}, got "${sort}"`);
    const order = q.get('order') || 'desc';
    if (order !== 'asc' && order !== 'desc') throw new HttpError(400, `order must be asc or desc, got "${order}"`);
    let states = null;
    if (q.get('state')) {
      states = q.get('state').split(',');
      for (const s of states) if (!JOB_STATES.includes(s)) throw new HttpError(400, `unknown job state "${s}"`);
    }
    const exact = ['user', 'kind', 'op'].map((k) => [k, q.get(k)]).filter(([, v]) => v);
    const board = q.get('board');
    const label = (q.get('label') || '').toLowerCase();
    const match = (j) => exact.every(([k, v]) => j[k] === v) &&
        (!board || j.assigned_board === board || j.board === board) &&
        (!states || states.includes(j.state)) &&
        (!label || j.label.toLowerCase().includes(label)) &&
        (from === null || j.created_ms >= from) && (to === null || j.created_ms <= to);
    const all = sortedBy(sort);
    const hits = [];
    let total = 0;
    const walk = (j) => {
      if (!match(j)) return;
      if (total >= offset && total < offset + limit) hits.push(publicJob(j));
      total += 1;
    };
    if (order === 'asc') for (let i = 0; i < all.length; i++) walk(all[i]);
    else for (let i = all.length - 1; i >= 0; i--) walk(all[i]);
    return { total, offset, limit, jobs: hits };
  }

  function getJob(idText) {
    const id = Number(idText);
    const job = byId.get(id);
    if (!job) throw new HttpError(404, `job ${idText} does not exist`);
    return job;
  }

  function samples(job, q) {
    const cases = OPS[job.op].cases;
    const index = intParam(q, 'case', { min: 0, max: 1e9, fallback: 0 });
    if (index >= cases.length) throw new HttpError(400, `case ${index} is out of range: job ${job.id} has ${cases.length} cases`);
    const maxPoints = intParam(q, 'max_points', { min: 10, max: 100000, fallback: 2000 });
    const bins = intParam(q, 'bins', { min: 0, max: 200, fallback: 0 });
    const done = casesProgress(job)[index];
    const values = done > 0 ? caseSamples(job, index, done) : [];
    const d = downsample(values, maxPoints);
    const unit = BOARD_KINDS[job.kind].unit;
    const out = { job: job.id, case: index, metric: unit, unit, n: values.length, downsampled: d.downsampled,
      iterations: d.iterations, values: d.values };
    if (bins > 0) out.histogram = histogram(values, bins);
    return out;
  }

  function compare(q) {
    const raw = q.get('jobs') || '';
    const parts = raw.split(',').filter(Boolean);
    if (parts.length < 2 || parts.length > 8) throw new HttpError(400, `jobs must list 2 to 8 job ids, got "${raw}"`);
    for (const p of parts) if (!/^[0-9]+$/.test(p)) throw new HttpError(400, `"${p}" is not a job id`);
    const key = parts.join(',');
    if (compareCache.has(key)) return compareCache.get(key);
    const jobs = parts.map(getJob);
    const details = jobs.map(jobDetail).map((d) => ({ ...d, cases: d.cases.filter((c) => c.n > 0) }));
    details.forEach((d, i) => {
      if (d.cases.length === 0) throw new HttpError(400, `job ${jobs[i].id} has no results yet (state ${jobs[i].state})`);
    });
    const caseIds = [];
    for (const d of details) for (const c of d.cases) if (!caseIds.includes(c.id)) caseIds.push(c.id);
    const cases = caseIds.map((cid) => {
      const per = details.map((d) => d.cases.find((c) => c.id === cid) || null);
      const params = per.find(Boolean).params;
      const base = per[0] ? caseSamples(jobs[0], per[0].index) : null;
      return {
        id: cid,
        params,
        medians: per.map((c) => (c ? c.median : null)),
        // As the server's JudgeVariation (server/service/series.cc), without outliers: the cv
        // against the default limit of the kind (host 10%, silicon 2%), exact when emulated.
        variation: per.map((c, k) => {
          if (!c) return null;
          const kind = BOARD_KINDS[jobs[k].kind];
          const maxCv = kind.measured === 'host' ? 0.10 : 0.02;
          return { stability: kind.emulated ? 'exact' : c.cv > maxCv ? 'unstable' : 'steady', cv: c.cv,
            max_cv: kind.emulated ? null : maxCv, n: c.n, outliers: 0, low_outliers: 0, high_outliers: 0,
            outlier_iterations: [], warmup: 0 };
        }),
        ratios: per.map((c, k) => {
          if (k === 0 || !c || !base) return null;
          return bootstrapRatio(base, caseSamples(jobs[k], c.index), 1 + cid);
        }),
      };
    });
    const out = {
      jobs: jobs.map((j) => ({ id: j.id, label: j.label, op: j.op, board: j.assigned_board, unit: BOARD_KINDS[j.kind].unit,
        emulated: BOARD_KINDS[j.kind].emulated, measured: BOARD_KINDS[j.kind].measured,
        kernel_set: (provenanceOf(j) || {}).kernel_set || '' })),
      param_names: OPS[jobs[0].op].params,
      cases,
      ratio_refused: null,
    };
    // As the server (RatioRefusal, server/service/queries.cc): no ratio between units or kinds of measurement.
    const units = [...new Set(out.jobs.map((j) => j.unit))].sort();
    const kinds = [...new Set(out.jobs.map((j) => j.measured))].sort();
    if (units.length > 1) {
      out.ratio_refused = `the jobs are measured in different units (${units.join(',')}): a ratio of their medians means nothing`;
    } else if (kinds.length > 1) {
      out.ratio_refused = `the jobs are of different kinds (${kinds.join(',')}): emulated, host and silicon figures ` +
          'measure different things, so a ratio between them means nothing';
    }
    if (out.ratio_refused) for (const c of cases) c.ratios = c.ratios.map(() => null);
    if (jobs.every((j) => ['succeeded', 'failed', 'cancelled', 'timed_out'].includes(j.state))) compareCache.set(key, out);
    return out;
  }

  function broadcast(type, data) {
    const text = `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
    for (const res of streams) res.write(text);
  }

  // The values of iterations [from, to) of the job (all cases in order) as `samples` events, to
  // the streams opened with ?job=ID, as the server sends them after each committed batch.
  function samplesEvents(job, from, to) {
    let start = 0;
    for (let index = 0; index < job.num_cases; index++) {
      const lo = Math.max(from, start);
      const hi = Math.min(to, start + job.iterations);
      if (lo < hi) {
        const values = caseSamples(job, index, hi - start);
        const iterations = [];
        for (let i = lo - start; i < hi - start; i++) iterations.push(i);
        const text = `event: samples\ndata: ${JSON.stringify({ id: job.id, case: index, iterations,
          values: iterations.map((i) => values[i]) })}\n\n`;
        for (const res of streams) if (res.samplesOf === job.id) res.write(text);
      }
      start += job.iterations;
    }
  }

  function jobEvent(job) {
    broadcast('job', { id: job.id, state: job.state, progress_done: job.progress_done,
      progress_total: job.progress_total, board: job.assigned_board, message: job.message });
  }

  function changed() {
    sortedCache.clear();
  }

  // Replays a job from "preparing" to "succeeded", emitting the events the server would.
  function replay(job, tickMs, step) {
    const board = lab.boards.find((b) => b.name === BOARD_KINDS[job.kind].board);
    clearInterval(job._timer);
    Object.assign(job, { state: 'preparing', progress_done: 0, started_ms: Date.now(), finished_ms: 0, message: '' });
    compareCache.clear();
    changed();
    if (board) Object.assign(board, { state: 'busy', current_job: job.id });
    jobEvent(job);
    if (board) broadcast('board', board);
    job._timer = setInterval(() => {
      if (job.state === 'preparing') {
        job.state = 'running';
      } else {
        const before = job.progress_done;
        job.progress_done = Math.min(job.progress_total, job.progress_done + step);
        samplesEvents(job, before, job.progress_done);
      }
      if (job.progress_done >= job.progress_total) {
        clearInterval(job._timer);
        job._timer = undefined;
        Object.assign(job, { state: 'succeeded', finished_ms: Date.now() });
        if (board) Object.assign(board, { state: 'idle', current_job: 0 });
        if (board) broadcast('board', board);
      }
      changed();
      jobEvent(job);
    }, tickMs);
  }

  return { lab, byId, streams, listJobs, getJob, samples, compare, broadcast, replay, jobDetail, publicJob };
}

function send(res, status, body, headers = {}) {
  const isJson = typeof body !== 'string' && !Buffer.isBuffer(body);
  const data = isJson ? JSON.stringify(body) : body;
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    'Content-Type': isJson ? 'application/json' : 'text/plain; charset=utf-8',
    'Cache-Control': 'no-store',
    ...headers,
  });
  res.end(data);
}

async function serveStatic(res, pathname) {
  let rel;
  try {
    rel = decodeURIComponent(pathname);
  } catch {
    throw new HttpError(400, 'bad path');
  }
  if (rel === '/' || rel === '') rel = '/index.html';
  const segments = rel.split('/').filter(Boolean);
  if (segments.some((s) => s.startsWith('.') || PRIVATE_SEGMENTS.has(s)) || rel.includes('\0')) {
    throw new HttpError(404, 'not found');
  }
  const file = normalize(join(WEB_ROOT, ...segments));
  if (!file.startsWith(WEB_ROOT + sep)) throw new HttpError(404, 'not found');
  const type = MIME[extname(file)];
  if (!type) throw new HttpError(404, 'not found');
  let body;
  try {
    if (!(await stat(file)).isFile()) throw new Error('not a file');
    body = await readFile(file);
  } catch {
    throw new HttpError(404, `${rel} not found`);
  }
  send(res, 200, body, { 'Content-Type': type, 'Cache-Control': 'no-cache' });
}

export function startServer(options) {
  const labApi = createLab(options);
  const authorized = (req) => !options.token || req.headers.authorization === `Bearer ${options.token}`;

  const server = createServer(async (req, res) => {
    const url = new URL(req.url, 'http://fixture');
    const path = url.pathname;
    const q = url.searchParams;
    try {
      if (path === '/healthz') return send(res, 200, { ok: true });
      const isApi = path.startsWith('/api/') || path.startsWith('/__fixture/');
      if (!isApi) {
        if (req.method !== 'GET' && req.method !== 'HEAD') throw new HttpError(405, 'method not allowed');
        return await serveStatic(res, path);
      }
      if (!authorized(req)) {
        throw new HttpError(401, req.headers.authorization ? 'the token is not valid' : 'no token: send Authorization: Bearer <token>');
      }
      if (path.startsWith('/__fixture/')) {
        if (path === '/__fixture/ids') return send(res, 200, labApi.lab.ids);
        if (req.method !== 'POST') throw new HttpError(405, 'POST only');
        if (path === '/__fixture/live') {
          const job = labApi.getJob(q.get('job'));
          labApi.replay(job, Number(q.get('tick_ms') || 100), Number(q.get('step') || 4));
          return send(res, 200, { ok: true });
        }
        if (path === '/__fixture/drop-events') {
          const n = labApi.streams.size;
          for (const s of labApi.streams) s.end();  // as a restarting server or a proxy would
          labApi.streams.clear();
          return send(res, 200, { dropped: n });
        }
        throw new HttpError(404, `no fixture control ${path}`);
      }
      if (req.method !== 'GET') throw new HttpError(405, `${req.method} is not allowed on ${path}`);
      if (path === '/api/v1/jobs') return send(res, 200, labApi.listJobs(q));
      let m = /^\/api\/v1\/jobs\/([0-9]+)$/.exec(path);
      if (m) return send(res, 200, jobDetail(labApi.getJob(m[1])));
      m = /^\/api\/v1\/jobs\/([0-9]+)\/export\.csv$/.exec(path);
      if (m) {
        // The real server writes `mculab export`'s CSV (proto/json/export_csv.h); the fixture a
        // stand-in of the same shape: the page only has to save these bytes.
        const d = jobDetail(labApi.getJob(m[1]));
        if (d.state !== 'succeeded') {
          throw new HttpError(400, `job ${d.id} is ${d.state}; only a succeeded job has results to export`);
        }
        const rows = (d.cases || []).map((c) => `${c.id},${c.n},${c.median}\n`).join('');
        return send(res, 200, `id,n,median\n${rows}`, { 'Content-Type': 'text/csv; charset=utf-8' });
      }
      m = /^\/api\/v1\/jobs\/([0-9]+)\/samples$/.exec(path);
      if (m) return send(res, 200, labApi.samples(labApi.getJob(m[1]), q));
      if (path === '/api/v1/compare') return send(res, 200, labApi.compare(q));
      if (path === '/api/v1/changes') return send(res, 200, changedFor(labApi.lab, q, publicJob));
      if (path === '/api/v1/series') {
        const r = seriesFor(labApi.lab, q);
        return send(res, r.status, r.body);
      }
      if (path === '/api/v1/boards') return send(res, 200, { boards: labApi.lab.boards });
      if (path === '/api/v1/events') {
        res.writeHead(200, { ...SECURITY_HEADERS, 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', Connection: 'keep-alive' });
        res.write('retry: 1000\n: connected\n\n');
        res.samplesOf = Number(q.get('job')) || 0;  // ?job=ID: that job's values too
        labApi.streams.add(res);
        const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), 15_000);
        res.on('close', () => {
          clearInterval(keepAlive);
          labApi.streams.delete(res);
        });
        return undefined;
      }
      throw new HttpError(404, `no route ${path}`);
    } catch (err) {
      const status = err instanceof HttpError ? err.status : 500;
      if (status === 500) console.error(err);
      if (res.headersSent) return res.destroy();
      return send(res, status, { error: err.message });
    }
  });
  return { server, labApi };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const options = parseArgs(process.argv.slice(2));
  const { server } = startServer(options);
  server.listen(options.port, options.host, () => {
    const { port } = server.address();
    console.log(`fixture_server ready http://${options.host}:${port}/`);
  });
  const stop = () => server.close(() => process.exit(0));
  process.on('SIGTERM', () => { server.closeAllConnections(); stop(); });
  process.on('SIGINT', () => { server.closeAllConnections(); stop(); });
}
