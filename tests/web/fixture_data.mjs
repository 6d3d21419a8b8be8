// In-memory lab data for fixture_server.mjs: deterministic jobs, boards, samples and the compare
// statistics of docs/http-api.md, generated from seeds so every run shows the same numbers.
// Only the front end's tests use this; the real server computes all of it from its database.

export const BASE_MS = Date.UTC(2025, 10, 3, 9, 0, 0);  // newest synthetic job: 2025-11-03 09:00 UTC
const DAY = 86_400_000;

// mulberry32: a small seeded PRNG (same numbers on every machine).
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const pick = (r, list) => list[Math.floor(r() * list.length)];

// The interpolated percentile of common/stats.cc (PercentileOfSorted).
export function percentileOfSorted(sorted, p) {
  if (sorted.length === 0) return 0;
  const hIdx = (sorted.length - 1) * Math.min(1, Math.max(0, p));
  const lo = Math.floor(hIdx);
  if (lo + 1 >= sorted.length) return sorted[sorted.length - 1];
  return sorted[lo] + (hIdx - lo) * (sorted[lo + 1] - sorted[lo]);
}

// common/stats.cc Summarize.
export function summarize(values) {
  const n = values.length;
  const s = { n, min: 0, median: 0, mean: 0, p90: 0, p99: 0, stddev: 0, cv: 0, max: 0 };
  if (n === 0) return s;
  const sorted = Float64Array.from(values).sort();
  s.min = sorted[0];
  s.max = sorted[n - 1];
  s.median = percentileOfSorted(sorted, 0.5);
  s.p90 = percentileOfSorted(sorted, 0.9);
  s.p99 = percentileOfSorted(sorted, 0.99);
  let sum = 0;
  for (const v of sorted) sum += v;
  s.mean = sum / n;
  if (n > 1) {
    let sq = 0;
    for (const v of sorted) sq += (v - s.mean) * (v - s.mean);
    s.stddev = Math.sqrt(sq / (n - 1));
  }
  s.cv = s.mean !== 0 ? s.stddev / Math.abs(s.mean) : 0;
  return s;
}

export const OPS = {
  conv2d_s8: {
    params: ['N', 'C', 'H', 'W', 'K', 'kernel_h', 'kernel_w', 'pad_h', 'pad_w', 'stride_h', 'stride_w'],
    cases: [  // examples/conv2d_sweep.csv
      [0, [1, 8, 16, 16, 8, 3, 3, 1, 1, 1, 1]],
      [1, [1, 16, 16, 16, 16, 3, 3, 1, 1, 1, 1]],
      [2, [1, 16, 16, 16, 16, 1, 1, 0, 0, 1, 1]],
      [3, [1, 8, 32, 32, 16, 3, 3, 1, 1, 2, 2]],
    ],
    macs: ([n, c, hh, w, k, kh, kw, ph, pw, sh, sw]) => {
      const oh = Math.floor((hh + 2 * ph - kh) / sh) + 1;
      const ow = Math.floor((w + 2 * pw - kw) / sw) + 1;
      return n * oh * ow * k * c * kh * kw;
    },
  },
  fully_connected_s8: {
    params: ['N', 'in_features', 'out_features'],
    cases: [[0, [1, 64, 32]], [1, [1, 256, 64]], [2, [1, 512, 128]]],
    macs: ([n, i, o]) => n * i * o,
  },
};

export const BOARD_KINDS = {
  'corstone300-qemu': { emulated: true, measured: 'emulated', unit: 'cycles', board: 'an547-0', cpu: 'cortex-m55', port: 'an547',
    clock_hz: 32_000_000, note: 'QEMU -icount shift=5: emulated time, not silicon cycles', perMac: 1.9, base: 800 },
  host: { emulated: false, measured: 'host', unit: 'ns', board: 'host-0', cpu: 'x86_64', port: 'host', clock_hz: 0,
    note: 'Linux process, CLOCK_MONOTONIC', perMac: 0.45, base: 300 },
  'stm32h743-nucleo': { emulated: false, measured: 'silicon', unit: 'cycles', board: 'h743-0', cpu: 'cortex-m7', port: 'stm32h7',
    clock_hz: 480_000_000, note: '', perMac: 1.15, base: 400 },
};

const USERS = ['ana', 'ben', 'chen', 'dara'];
const LABELS = ['', '', '', 'baseline', 'nightly', 'try 1', 'after im2col change', 'unroll x4', 'O2 vs O3'];
const FINAL = ['succeeded', 'failed', 'cancelled', 'timed_out'];

function makeJob(id, r, createdMs, overrides = {}) {
  const kind = pick(r, Object.keys(BOARD_KINDS));
  const op = r() < 0.7 ? 'conv2d_s8' : 'fully_connected_s8';
  const u = r();
  const state = u < 0.86 ? 'succeeded' : u < 0.93 ? 'failed' : u < 0.97 ? 'cancelled' : 'timed_out';
  const iterations = pick(r, [20, 50, 100]);
  const num_cases = OPS[op].cases.length;
  const job = {
    id, user: pick(r, USERS), kind, board: '', assigned_board: BOARD_KINDS[kind].board, op,
    label: pick(r, LABELS), state, created_ms: createdMs, started_ms: createdMs + 2000 + Math.floor(r() * 30_000),
    finished_ms: 0, num_cases, iterations, warmup: 2, emulated: BOARD_KINDS[kind].emulated,
    measured: BOARD_KINDS[kind].measured, message: '',
    progress_done: 0, progress_total: num_cases * iterations,
  };
  job.finished_ms = job.started_ms + 5000 + Math.floor(r() * 120_000);
  job.progress_done = state === 'succeeded' ? job.progress_total : Math.floor(job.progress_total * r());
  if (state === 'failed') job.message = 'checksum mismatch on case 2: board 0x1c2f, host 0x9a01';
  if (state === 'timed_out') job.message = 'no frame from the runner for 60 s';
  if (state === 'cancelled') job.message = 'cancelled by the user';
  // A "code version": jobs of the same kind/op differ by a few percent between versions.
  job._version = Math.floor(r() * 3);
  return Object.assign(job, overrides);
}

// The special jobs the browser tests look for, newest first after the synthetic ones.
function specialJobs(firstId) {
  const t = BASE_MS + 3600_000;
  const ids = {};
  let id = firstId;
  const jobs = [];
  const add = (name, fields) => {
    ids[name] = id;
    const j = makeJob(id, rng(id), t + (id - firstId) * 60_000, fields);
    j.created_ms = t + (id - firstId) * 60_000;
    j.started_ms = j.created_ms + 3000;
    j.finished_ms = j.started_ms + 45_000;
    jobs.push(j);
    id += 1;
  };
  add('hostBaseline', { kind: 'host', assigned_board: 'host-0', op: 'conv2d_s8', label: 'host baseline',
    state: 'succeeded', iterations: 200, emulated: false, message: '', _version: 0, user: 'ana' });
  add('hostSlower', { kind: 'host', assigned_board: 'host-0', op: 'conv2d_s8', label: 'host with debug build',
    state: 'succeeded', iterations: 200, emulated: false, message: '', _version: 0, _slow: [1.25, 1.0, 0.8, 1.12], user: 'ana',
    reruns: 2, reruns_done: 1, max_cv_pct: 5 });
  add('emulated', { kind: 'corstone300-qemu', assigned_board: 'an547-0', op: 'conv2d_s8', label: 'qemu sweep',
    state: 'succeeded', iterations: 20, emulated: true, message: '', _version: 1, user: 'ben', _events: ['instructions', 'loads'] });
  add('xss', { kind: 'host', assigned_board: 'host-0', op: 'conv2d_s8', label: '<img src=x onerror=alert(1)>',
    state: 'succeeded', iterations: 50, emulated: false, user: 'eve',
    message: '<script>alert("message")</script> runner said: <b>done</b>', _version: 2,
    _provenance: { note: '<img src=y onerror=alert(2)> note from firmware', toolchain: '<svg onload=alert(3)>gcc 12' } });
  add('silicon', { kind: 'stm32h743-nucleo', assigned_board: 'h743-0', op: 'conv2d_s8', label: 'H7 with profile',
    state: 'succeeded', iterations: 100, emulated: false, message: '', _version: 0, user: 'chen', _ops: true, _memory: true });
  add('long', { kind: 'host', assigned_board: 'host-0', op: 'fully_connected_s8', label: 'long soak',
    state: 'succeeded', iterations: 20000, emulated: false, message: '', _version: 0, user: 'dara' });
  add('failed', { kind: 'corstone300-qemu', assigned_board: 'an547-0', op: 'conv2d_s8', label: 'broken kernel',
    state: 'failed', iterations: 20, emulated: true, message: 'checksum mismatch on case 1: board 0x00000000, host 0x5f3a9c12',
    _casesDone: 1, user: 'ben' });
  // Submitted with --board h743-0, which chen has reserved (makeLab fills in `wait`).
  add('queued', { kind: 'stm32h743-nucleo', assigned_board: '', board: 'h743-0', op: 'fully_connected_s8', label: 'waiting for H7',
    state: 'queued', iterations: 50, emulated: false, message: '', started_ms: 0, finished_ms: 0, progress_done: 0, user: 'dara',
    priority: 'high' });
  add('live', { kind: 'host', assigned_board: 'host-0', op: 'fully_connected_s8', label: 'live run',
    state: 'succeeded', iterations: 40, emulated: false, message: '', _version: 0, user: 'ana' });
  add('cancelledMidway', { kind: 'stm32h743-nucleo', assigned_board: 'h743-0', op: 'fully_connected_s8',
    label: 'cancelled midway', state: 'cancelled', iterations: 30, emulated: false, message: 'cancelled by the user',
    _casesDone: 2, _noChecksum: [1], user: 'chen' });
  // A model's per-layer profile (mculab submit --model), reference and Helium kernels
  // (--kernels reference and the default).
  add('modelM55', { kind: 'corstone300-qemu', assigned_board: 'an547-0', op: 'conv2d_s8', label: 'kws on M55',
    state: 'succeeded', iterations: 20, emulated: true, message: '', _version: 0, user: 'ben', _layers: 1,
    kernels: 'reference', kernel_set: 'reference', _provenance: { kernel_set: 'reference' } });
  add('modelM55Helium', { kind: 'corstone300-qemu', assigned_board: 'an547-0', op: 'conv2d_s8',
    label: 'kws on M55 (Helium)', state: 'succeeded', iterations: 20, emulated: true, message: '', _version: 0,
    user: 'ben', _layers: 0.5, kernels: 'fast', kernel_set: 'helium', _provenance: { kernel_set: 'helium' } });
  for (const j of jobs) {
    j.priority = j.priority || 'normal';
    j.measured = BOARD_KINDS[j.kind].measured;
    j.num_cases = OPS[j.op].cases.length;
    j.progress_total = j.num_cases * j.iterations;
    if (j.state === 'succeeded') j.progress_done = j.progress_total;
    if (j.state === 'queued') { j.started_ms = 0; j.finished_ms = 0; j.progress_done = 0; }
    if (j.state === 'failed' || j._casesDone) j.progress_done = j.iterations * (j._casesDone || 0);
  }
  return { jobs, ids };
}

// The per-iteration values of one case, or [] for a case that did not run.
export function caseSamples(job, caseIndex, count = job.iterations) {
  const opDef = OPS[job.op];
  const [, params] = opDef.cases[caseIndex];
  const k = BOARD_KINDS[job.kind];
  const versionFactor = 1 + 0.03 * (job._version || 0);
  const slow = job._slow ? job._slow[caseIndex] ?? 1 : 1;
  const typical = (opDef.macs(params) * k.perMac + k.base) * versionFactor * slow;
  const r = rng(job.id * 1000 + caseIndex + 7);
  const out = new Array(count);
  for (let i = 0; i < count; i++) {
    if (k.emulated) {
      out[i] = Math.round(typical);  // QEMU -icount: the same count every time
    } else if (job.kind === 'host') {
      // ns: lognormal-ish noise, a slow first iterations' cache warm-up, rare scheduler spikes
      const noise = Math.exp((r() + r() + r() - 1.5) * 0.06);
      const spike = r() < 0.01 ? 2 + r() * 3 : 1;
      const warm = i < 3 ? 1.15 : 1;
      out[i] = Math.round(typical * noise * spike * warm);
    } else {
      // silicon cycles: tight, with occasional interrupt hits
      out[i] = Math.round(typical * (1 + (r() - 0.5) * 0.004) + (r() < 0.03 ? 900 + r() * 400 : 0));
    }
  }
  return out;
}

// How many iterations of each case a job has measured (from progress_done).
export function casesProgress(job) {
  const done = [];
  let left = job.progress_done;
  for (let i = 0; i < job.num_cases; i++) {
    const n = Math.max(0, Math.min(job.iterations, left));
    done.push(n);
    left -= n;
  }
  return done;
}

export function provenanceOf(job) {
  if (!(job.started_ms > 0) || (job.progress_done === 0 && job.state !== 'running')) return null;
  const k = BOARD_KINDS[job.kind];
  const p = {
    board: job.assigned_board, board_kind: job.kind, board_serial: job.kind === 'stm32h743-nucleo' ? '0668FF545150' : '',
    agent: 'lab-1', runner_version: '0.1.0',
    firmware_sha256: shaLike(job.id * 3 + (job._version || 0)), workload_sha256: shaLike(job.id * 7 + 1),
    toolchain: k.emulated || job.kind !== 'host' ? 'arm-none-eabi-gcc 12.2.1 -O2' : 'gcc 12.2.0 -O2',
    clock_hz: k.clock_hz, port: k.port, cpu: k.cpu, emulated: k.emulated, measured: k.measured, timer_unit: k.unit,
    counters: job.kind === 'stm32h743-nucleo' ? 'DWT_CYCCNT' : '', note: k.note,
  };
  return Object.assign(p, job._provenance || {});
}

function shaLike(seed) {
  const r = rng(seed + 99);
  let s = '';
  for (let i = 0; i < 64; i++) s += '0123456789abcdef'[Math.floor(r() * 16)];
  return s;
}

export function publicJob(job) {
  const out = {};
  for (const [k, v] of Object.entries(job)) if (!k.startsWith('_')) out[k] = v;
  return out;
}

// GET /api/v1/jobs/{id}.
export function jobDetail(job) {
  const opDef = OPS[job.op];
  const progress = casesProgress(job);
  const prov = provenanceOf(job);
  const unit = BOARD_KINDS[job.kind].unit;
  // Every case; one that has not finished has n = 0 and no figures (as the server, which gives
  // statistics once every iteration of a case is stored).
  const all = opDef.cases.map(([id, params], index) => {
    if (progress[index] < job.iterations) {
      return { index, id, params, metric: '', unit: '', ...summarize([]), checksum: null, checksum_ok: null,
        overhead: null, checksum_verified: true };
    }
    const values = caseSamples(job, index);
    const s = summarize(values);
    const reported = !(job._noChecksum || []).includes(index);  // cancelled before the case's checksum
    return { index, id, params, metric: unit, unit, ...s, checksum: reported ? (id * 2654435761) >>> 0 : null,
      checksum_ok: reported ? !(job.state === 'failed' && index === (job._casesDone || 0)) : null,
      overhead: reported ? (unit === 'ns' ? 38 : 12) : null, checksum_verified: true };
  });
  const cases = all.filter((c) => c.n > 0);
  // The job's fields at the top level, as proto/json/documents.cc writes them: "board" is the
  // board it runs on, else the one it asked for.
  const detail = { ...publicJob(job), board: job.assigned_board || job.board, requested_board: job.board,
    provenance: prov, param_names: opDef.params, cases: all, events: [], passes: [], ops: [], memory: null };
  if (job._ops && cases.length) {
    detail.ops = [
      { name: 'conv2d_s8 (im2col)', calls: 4, cycles: 181_522, share: 0.71 },
      { name: 'requantize', calls: 4, cycles: 51_300, share: 0.2 },
      { name: '<b>pad</b> & copy', calls: 4, cycles: 23_011, share: 0.09 },
    ];
  }
  if (job._layers && cases.length) detail.ops = layerOps(job._layers);
  // Counter events per case, as the server's `events` (proto/json/documents.cc).
  if (job._events && cases.length) {
    for (const c of cases) {
      job._events.forEach((event, k) => {
        const median = Math.round(c.median * (k === 0 ? 0.8 : 0.25));
        detail.events.push({ case: c.index, id: c.id, params: c.params, event, pass: k === 0 ? 0 : 1, n: c.n,
          min: median, median, max: median, cv: 0 });
      });
    }
  }
  if (job._memory && cases.length) {
    detail.memory = { arena_bytes: 65_536, arena_used_bytes: 41_472, stack_peak_bytes: 2_304,
      flash: { code_bytes: 48_120, rodata_bytes: 12_288 } };
  }
  return detail;
}

// The API's per-layer rows (proto/json/documents.cc OpsJson) of a small model: cycles and
// instructions per layer; `convScale` scales the conv layers (a faster kernel build).
// A layer name as TensorFlow writes them (100 characters): shown whole, never cut.
export const LONG_LAYER_NAME =
    'functional_1/sequential/block_3_project/Conv2D;functional_1/sequential/block_3_project_BN/FusedBatch';

export function layerOps(convScale) {
  const layers = [['CONV_2D', 'conv1', 40_000], ['DEPTHWISE_CONV_2D', 'dw', 12_000], ['CONV_2D', LONG_LAYER_NAME, 30_000],
    ['AVERAGE_POOL_2D', 'pool', 2_000], ['RESHAPE', 'flatten', 300], ['FULLY_CONNECTED', '<b>fc</b>', 1_500],
    ['SOFTMAX', 'softmax', 800]];
  const rows = [];
  for (const [metric, k] of [['cycles', 1], ['instructions', 0.8]]) {
    const per = layers.map(([type, , c]) => Math.round(c * k * (type.startsWith('CONV') ? convScale : 1)));
    const total = per.reduce((a, b) => a + b, 0);
    layers.forEach(([type, name], i) => rows.push({ case: 0, op_index: i, type, name, metric, count: 20,
      sum: per[i] * 20, mean: per[i], min: per[i], max: per[i], share: per[i] / total }));
  }
  return rows;
}

// min/max bucket downsampling of docs/http-api.md: each bucket keeps its smallest and largest
// value (in iteration order), so spikes survive.
export function downsample(values, maxPoints) {
  const n = values.length;
  if (n <= maxPoints) return { iterations: values.map((_, i) => i), values: values.slice(), downsampled: false };
  const buckets = Math.floor(maxPoints / 2);
  const iterations = [];
  const out = [];
  for (let b = 0; b < buckets; b++) {
    const start = Math.floor((b * n) / buckets);
    const end = Math.floor(((b + 1) * n) / buckets);
    let lo = start;
    let hi = start;
    for (let i = start; i < end; i++) {
      if (values[i] < values[lo]) lo = i;
      if (values[i] > values[hi]) hi = i;
    }
    for (const i of lo === hi ? [lo] : [Math.min(lo, hi), Math.max(lo, hi)]) {
      iterations.push(i);
      out.push(values[i]);
    }
  }
  return { iterations, values: out, downsampled: true };
}

export function histogram(values, bins) {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of values) {
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  if (values.length === 0) return { lo: 0, hi: 0, counts: [] };
  if (lo === hi) return { lo, hi, counts: [values.length] };
  const counts = new Array(bins).fill(0);
  const w = (hi - lo) / bins;
  for (const v of values) counts[Math.min(bins - 1, Math.floor((v - lo) / w))] += 1;
  return { lo, hi, counts };
}

// The k-th smallest element of a (reordered in place): Hoare's quickselect.
function selectKth(a, k) {
  let lo = 0;
  let hi = a.length - 1;
  while (lo < hi) {
    const pivot = a[(lo + hi) >> 1];
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i] < pivot) i++;
      while (a[j] > pivot) j--;
      if (i <= j) {
        const t = a[i];
        a[i] = a[j];
        a[j] = t;
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return a[k];
  }
  return a[k];
}

// The interpolated median of common/stats.cc, without sorting (a is reordered).
function medianInPlace(a) {
  const h = (a.length - 1) * 0.5;
  const lo = Math.floor(h);
  const x = selectKth(a, lo);
  if (lo + 1 >= a.length || h === lo) return x;
  let next = Infinity;  // after selectKth, everything right of lo is >= a[lo]
  for (let i = lo + 1; i < a.length; i++) if (a[i] < next) next = a[i];
  return x + (h - lo) * (next - x);
}

// Every k-th value, so at most max remain. Fixture only: JavaScript needs seconds to bootstrap a
// 20,000-iteration run; the real server resamples every sample as docs/http-api.md says.
function thin(values, max) {
  if (values.length <= max) return values;
  const k = Math.ceil(values.length / max);
  return values.filter((_, i) => i % k === 0);
}

// Bootstrap 95% interval of median(b)/median(a): 2000 resamples of both, fixed seed.
export function bootstrapRatio(fullA, fullB, seed = 1) {
  const r = rng(seed);
  const medA = summarize(fullA).median;
  const medB = summarize(fullB).median;
  const a = thin(fullA, 2000);
  const b = thin(fullB, 2000);
  const ratios = new Float64Array(2000);
  const ra = new Float64Array(a.length);
  const rb = new Float64Array(b.length);
  for (let k = 0; k < ratios.length; k++) {
    for (let i = 0; i < a.length; i++) ra[i] = a[Math.floor(r() * a.length)];
    for (let i = 0; i < b.length; i++) rb[i] = b[Math.floor(r() * b.length)];
    ratios[k] = medianInPlace(rb) / medianInPlace(ra);
  }
  ratios.sort();
  const lo = percentileOfSorted(ratios, 0.025);
  const hi = percentileOfSorted(ratios, 0.975);
  return { ratio: medB / medA, lo, hi, significant: lo > 1 || hi < 1 };
}

const BOARD_NOTE_HTML = '<b>USB hub</b> resets under load <script>alert("board")</script>';

export function makeBoards(nowMs) {
  return [
    { name: 'an547-0', kind: 'corstone300-qemu', agent: 'lab-1', state: 'idle', health: 'good', emulated: true, measured: 'emulated',
      tags: { cpu: 'cortex-m55', npu: 'ethos-u55' }, current_job: 0, queue_length: 0, holder: '', lease_until_ms: 0, note: '' },
    { name: 'host-0', kind: 'host', agent: 'lab-1', state: 'idle', health: 'good', emulated: false, measured: 'host',
      tags: { cpu: 'x86_64', timing: 'host' }, current_job: 0, queue_length: 0, holder: '', lease_until_ms: 0, note: '' },
    { name: 'h743-0', kind: 'stm32h743-nucleo', agent: 'lab-2', state: 'reserved', health: 'good', emulated: false, measured: 'silicon',
      tags: { cpu: 'cortex-m7', 'flash': '2MB', '<i>rack</i>': 'A<3>' }, current_job: 0, queue_length: 1,
      holder: 'chen', lease_until_ms: nowMs + 47 * 60_000, note: 'reserved for the H7 profiling week' },
    { name: 'f746-1', kind: 'stm32f746-disco', agent: 'lab-2', state: 'offline', health: 'maintenance', emulated: false, measured: 'silicon',
      tags: { cpu: 'cortex-m7' }, current_job: 0, queue_length: 0, holder: '', lease_until_ms: 0, note: BOARD_NOTE_HTML },
  ];
}

// The whole lab: `count` synthetic jobs (ids 1..count, one every few minutes back from BASE_MS)
// followed by the special jobs.
export function makeLab({ count = 200, nowMs = Date.now() } = {}) {
  const jobs = [];
  const spacing = Math.max(60_000, Math.floor((120 * DAY) / Math.max(1, count)));
  for (let id = 1; id <= count; id++) {
    jobs.push(makeJob(id, rng(id), BASE_MS - (count - id) * spacing));
  }
  const special = specialJobs(count + 1);
  jobs.push(...special.jobs);
  const boards = makeBoards(nowMs);
  // The queued job waits on chen's reservation of h743-0: what the server says of it (Lab's
  // QueueWait), the estimate being the lease end.
  const h743 = boards.find((b) => b.name === 'h743-0');
  special.jobs.find((j) => j.id === special.ids.queued).wait = {
    position: 1, board: h743.name, holder: h743.holder, lease_until_ms: h743.lease_until_ms, note: h743.note,
    estimated_start_ms: h743.lease_until_ms,
  };
  return { jobs, ids: special.ids, boards, boardNoteHtml: BOARD_NOTE_HTML };
}
