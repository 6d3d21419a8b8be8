// Job page: state and live progress (SSE), why a queued job waits, the emulated/silicon label,
// the running case's values live (SSE `samples`), per-iteration plot and histogram per case,
// per-case statistics, counter events per case, per-op and memory sections when present,
// provenance, CSV/JSON downloads.
import { apiGet, apiGetText, describeApiError } from '../api.js';
import { buildJson, exportFileName } from '../csv.js';
import {
  badge, cssToken, downloadLink, h, measuredBadge, messageBox, replaceChildren, scrollTable,
} from '../dom.js';
import {
  formatCount, formatNumber, formatPercent, formatProgress, formatTime, jobDuration, measuredKind, paramsText,
} from '../format.js';
import { histogramBins, histogramFromServer } from '../histogram.js';
import { layerBarsSection } from '../layer_view.js';
import { LiveSeries, eventsByCase, waitText } from '../job_live.js';
import { initLayout, setTitle } from '../layout.js';
import { onLive, onReconnect, startLive } from '../live.js';
import { drawHistogram, drawLineChart } from '../plots.js';
import { parseJobId } from '../query.js';
import { trendHref } from '../trend_model.js';

const FINAL_STATES = ['succeeded', 'failed', 'cancelled', 'timed_out'];
const REFRESH_MS = 2000;  // at most one refetch per this while events stream in
const MAX_POINTS = 2000;
const HIST_BINS = 40;

const layout = initLayout('job');
const jobId = parseJobId(location.search);
setTitle(jobId ? `job #${jobId}` : 'job');
// The stream also carries this job's values as they are stored (the live plot).
startLive(layout.setLive, jobId ? { url: `api/v1/events?job=${jobId}` } : {});

let detail = null;
let caseIndex = Number(new URLSearchParams(location.search).get('case')) || 0;
let plotted = null;  // {caseIndex, n, downsampled} of what the plots show
let destroyPlots = [];
let refreshTimer = null;
let lastRefresh = 0;
const liveSeries = new LiveSeries();
let liveDestroy = null;
let liveTimer = null;

// ---- static structure -------------------------------------------------------------------------
const title = h('h1', { id: 'job-title' }, jobId ? `Job #${jobId}` : 'Job');
const messages = h('div', { id: 'job-message' });
const banner = h('div', { id: 'measured-banner' });
const summary = h('section', { id: 'job-summary', class: 'card' });
const progress = h('section', { id: 'job-progress', class: 'card' });
const downloads = h('div', { class: 'downloads', id: 'downloads' });
const caseSelect = h('select', { id: 'case-select' });
const plotInfo = h('p', { class: 'plot-info', id: 'plot-info' });
const linePlot = h('div', { class: 'plot', id: 'plot-line', role: 'img', 'aria-label': 'per-iteration values' });
const histPlot = h('div', { class: 'plot', id: 'plot-hist', role: 'img', 'aria-label': 'histogram of values' });
const plotsSection = h('section', { id: 'plots', class: 'card', hidden: true },
    h('h2', {}, 'Per-iteration values'),
    h('div', { class: 'field inline' }, h('label', { for: 'case-select' }, 'case'), caseSelect),
    plotInfo,
    h('div', { class: 'plots' },
        h('figure', {}, h('figcaption', {}, 'each measured iteration'), linePlot),
        h('figure', {}, h('figcaption', {}, 'histogram'), histPlot)));
const liveInfo = h('p', { class: 'plot-info', id: 'live-info' });
const livePlot = h('div', { class: 'plot', id: 'plot-live', role: 'img', 'aria-label': 'values of the running case, live' });
const liveSection = h('section', { id: 'live', class: 'card', hidden: true },
    h('h2', {}, 'Live values'), liveInfo, h('figure', {}, h('figcaption', {}, 'each measured iteration so far'), livePlot));
const casesSection = h('section', { id: 'cases', class: 'card' });
const eventsSection = h('section', { id: 'events', class: 'card', hidden: true });
const opsSection = h('section', { id: 'ops', class: 'card', hidden: true });
const memorySection = h('section', { id: 'memory', class: 'card', hidden: true });
const provenanceSection = h('section', { id: 'provenance', class: 'card', hidden: true });

replaceChildren(layout.main, title, messages, banner, summary, progress, downloads, liveSection, plotsSection,
    casesSection, eventsSection, opsSection, memorySection, provenanceSection);

function selectCase(index) {
  caseIndex = index;
  caseSelect.value = String(index);
  rememberCase();
  renderCases();
  loadSamples({ force: true });
}
caseSelect.addEventListener('change', () => selectCase(Number(caseSelect.value)));

function rememberCase() {
  const q = new URLSearchParams(location.search);
  q.set('case', String(caseIndex));
  history.replaceState(null, '', `${location.pathname}?${q}`);
}

// ---- sections ---------------------------------------------------------------------------------
// 'emulated', 'host' or 'silicon': the runner's HELLO once the run started, else the board's.
function measured() {
  const p = detail.provenance;
  return measuredKind(p && p.runner_version ? p : detail);
}
function isEmulated() {
  return measured() === 'emulated';
}

function renderBanner() {
  const p = detail.provenance || {};
  if (measured() === 'host') {
    const where = [p.board || detail.assigned_board, p.cpu].filter(Boolean).join(', ');
    replaceChildren(banner, h('div', { class: 'measure-banner host', role: 'note', id: 'measured-label' },
        h('strong', { class: 'measure-word' }, 'HOST RESULTS (native)'),
        h('span', {}, ` The runner ran as a native Linux process${where ? ` (${where})` : ''}, timed by ` +
            "the host's clock: neither an MCU nor an emulator. Use it to check a workload, not to " +
            'predict a microcontroller.'),
        p.note ? h('span', { class: 'measure-note' }, ` Run note: ${p.note}`) : null));
  } else if (isEmulated()) {
    replaceChildren(banner, h('div', { class: 'measure-banner emulated', role: 'note', id: 'measured-label' },
        h('strong', { class: 'measure-word' }, 'EMULATED RESULTS'),
        h('span', {}, ' These figures come from an emulator: they count executed instructions in ' +
            'virtual time, not the cycles of a real chip. Compare code changes with them; do not ' +
            'read them as silicon speed.'),
        p.note ? h('span', { class: 'measure-note' }, ` Run note: ${p.note}`) : null));
  } else {
    const where = [p.board || detail.assigned_board, p.cpu, p.clock_hz ? `${formatNumber(p.clock_hz / 1e6)} MHz` : '']
        .filter(Boolean).join(', ');
    replaceChildren(banner, h('div', { class: 'measure-banner silicon', role: 'note', id: 'measured-label' },
        h('strong', { class: 'measure-word' }, 'SILICON RESULTS'),
        h('span', {}, ` Measured on real hardware${where ? ` (${where})` : ''}.`),
        p.note ? h('span', { class: 'measure-note' }, ` Run note: ${p.note}`) : null));
  }
}

function dl(pairs, cls) {
  const list = h('dl', { class: cls || 'pairs' });
  for (const [k, v] of pairs) {
    if (v === null || v === undefined || v === '') continue;
    list.append(h('dt', {}, k), h('dd', {}, v));
  }
  return list;
}

function renderSummary() {
  const j = detail;
  setTitle(`job #${j.id}${j.label ? ` · ${j.label}` : ''}`);
  replaceChildren(title, `Job #${j.id} `, badge('state', j.state), ' ', measuredBadge(measured()));
  replaceChildren(summary,
      j.label ? h('p', { class: 'job-label' }, h('span', { class: 'muted' }, 'label: '), h('span', { id: 'job-label' }, j.label)) : null,
      j.message ? messageBox(j.state === 'failed' || j.state === 'timed_out' ? 'error' : 'info',
          h('span', { id: 'job-message-text' }, j.message)) : null,
      j.state === 'queued' && j.wait ? messageBox('info', h('span', { id: 'job-wait' }, waitText(j.wait, Date.now()))) : null,
      dl([
        ['operator', j.op],
        ...(j.model_name ? [['model', h('span', { id: 'job-model', title: `SHA-256 ${j.model_sha256}` }, j.model_name)],
          ['model graph', j.model_summary || '-'], ['model SHA-256', h('code', {}, j.model_sha256 || '-')]] : []),
        ...(j.commit || j.branch || j.url ? [['code', h('span', { id: 'job-code' },
          j.branch ? `branch ${j.branch}` : '', j.branch && j.commit ? ' · ' : '',
          j.commit ? h('code', { title: j.commit }, j.commit.slice(0, 12)) : '',
          /^https?:\/\//.test(j.url || '') ? [' · ', h('a', { href: j.url, rel: 'noopener noreferrer', target: '_blank' }, 'link')] : '')]] : []),
        ['board kind', j.kind],
        ['board', j.assigned_board || (j.requested_board ? `${j.requested_board} (requested)` : 'any')],
        ['user', j.user],
        ['priority', j.priority],
        ['submitted', formatTime(j.created_ms)],
        ['started', formatTime(j.started_ms)],
        ['finished', formatTime(j.finished_ms)],
        ['duration', jobDuration(j, Date.now())],
        ['cases', formatCount(j.num_cases)],
        ['iterations', `${formatCount(j.iterations)} per case (+${formatCount(j.warmup)} warm-up)`],
        ...(j.reruns > 0 ? [['reruns', h('span', { id: 'job-reruns' },
          `${formatCount(j.reruns_done)} of ${formatCount(j.reruns)} while a case's cv is above ` +
          (j.max_cv_pct > 0 ? `${j.max_cv_pct}%` : 'the default (10% host, 2% silicon)'))]] : []),
      ]));
}

function renderProgress() {
  const j = detail;
  const running = !FINAL_STATES.includes(j.state);
  const bar = h('progress', { id: 'progress-bar', max: String(Math.max(1, j.progress_total)), value: String(j.progress_done) });
  replaceChildren(progress,
      h('h2', {}, running ? 'Progress (live)' : 'Progress'),
      h('div', { class: 'progress-line' }, bar,
          h('span', { id: 'progress-text' }, j.progress_total > 0 ? formatProgress(j.progress_done, j.progress_total) : 'not started'),
          ' ', badge('state', j.state)));
}

function renderDownloads() {
  const j = detail;
  // The CSV is the server's, the bytes `mculab export` writes (a succeeded job's only).
  const csv = j.state === 'succeeded' ?
    downloadLink('Download CSV', exportFileName(j.id, 'csv'), 'text/csv',
        () => apiGetText(`jobs/${j.id}/export.csv`),
        (err) => { csv.textContent = `Download CSV: ${describeApiError(err)}`; }) :
    null;
  replaceChildren(downloads, csv,
      downloadLink('Download JSON', exportFileName(j.id, 'json'), 'application/json', () => buildJson(detail)));
  for (const a of downloads.querySelectorAll('a')) a.id = a.download.endsWith('.csv') ? 'download-csv' : 'download-json';
}

function unitOf(c) {
  return c.unit || (detail.provenance && detail.provenance.timer_unit) || '';
}

function caseName(c) {
  const params = paramsText(detail.param_names, c.params);
  return `case ${c.id}${params ? `: ${params}` : ''}`;
}

function renderCases() {
  // Every case of the job is listed; one that has not run has n = 0.
  const ran = (c) => c.n > 0;
  const cases = detail.cases || [];
  if (!cases.some(ran)) {
    const j = detail;
    replaceChildren(casesSection, h('h2', {}, 'Per-case statistics'),
        h('p', { class: 'muted', id: 'no-results' }, FINAL_STATES.includes(j.state)
          ? 'This job has no results.' : `No results yet (${j.state}): cases appear here as they finish.`));
    plotsSection.hidden = true;
    return;
  }
  plotsSection.hidden = false;
  if (!cases.some((c) => c.index === caseIndex && ran(c))) caseIndex = cases.find(ran).index;
  replaceChildren(caseSelect, cases.filter(ran).map((c) => h('option', { value: String(c.index) }, caseName(c))));
  caseSelect.value = String(caseIndex);

  // A case that never ran (the job was queued, cancelled, timed out or refused before it) has no
  // statistics and no checksum verdict: "not run" ("pending" while the job may still run it), never
  // zeros and MISMATCH.
  const notRun = FINAL_STATES.includes(detail.state) ? 'not run' : 'pending';
  const unit = unitOf(cases.find(ran) || cases[0]);
  const u = (name) => [name, h('span', { class: 'unit' }, ` (${unit})`)];
  const head = h('tr', {},
      h('th', { scope: 'col' }, 'case'), h('th', { scope: 'col', class: 'num' }, 'n'),
      ...['min', 'median', 'mean', 'p90', 'p99', 'stddev', 'max', 'overhead']
          .map((s) => h('th', { scope: 'col', class: ['num', `stat-${s}`] }, u(s))),
      h('th', { scope: 'col', class: 'num' }, 'cv'), h('th', { scope: 'col' }, 'checksum'));
  const body = h('tbody', {});
  for (const c of cases) {
    if (!ran(c)) {
      body.append(h('tr', { dataset: { caseIndex: c.index }, class: ['not-run', c.index === caseIndex ? 'selected' : null] },
          h('th', { scope: 'row', class: 'case-cell' }, h('span', { class: 'case-id' }, String(c.id)),
              h('span', { class: 'params' }, paramsText(detail.param_names, c.params))),
          h('td', { class: 'not-run-cell', colspan: '11' }, notRun)));
      continue;
    }
    const tr = h('tr', { dataset: { caseIndex: c.index }, class: c.index === caseIndex ? 'selected' : null },
        h('th', { scope: 'row', class: 'case-cell' },
            h('button', { type: 'button', class: 'linkish case-id', title: 'plot this case', on: { click: () => selectCase(c.index) } },
                String(c.id)),
            h('span', { class: 'params' }, paramsText(detail.param_names, c.params)),
            h('a', { class: 'trend-link', href: trendHref(detail, c), title: 'this case job after job' }, 'trend')),
        h('td', { class: 'num' }, formatCount(c.n)),
        ...[['min', c.min], ['median', c.median], ['mean', c.mean], ['p90', c.p90], ['p99', c.p99],
          ['stddev', c.stddev], ['max', c.max], ['overhead', c.overhead]]
            .map(([s, v]) => h('td', { class: ['num', `stat-${s}`] }, formatNumber(v))),
        h('td', { class: 'num' }, formatPercent(c.cv)),
        c.checksum_verified === false
          ? h('td', { class: 'checksum-unverified' }, 'not verified (custom firmware)')
          : c.checksum_ok === null || c.checksum_ok === undefined
            ? h('td', { class: 'checksum-pending' }, 'not reported yet')
            : h('td', { class: c.checksum_ok ? 'checksum-ok' : 'checksum-bad' }, c.checksum_ok ? 'ok' : 'MISMATCH'));
    body.append(tr);
  }
  const table = h('table', { class: 'data cases', id: 'cases-table' },
      h('caption', {}, measuredBadge(measured()), ` ${unit}`),
      h('thead', {}, head), body);
  replaceChildren(casesSection, h('h2', {}, 'Per-case statistics'),
      h('p', { class: 'table-note' }, `All figures in ${unit}${measured() === 'silicon' ? '' : ` (${measured()})`}. Overhead is the ` +
          "runner's empty measured region, shown beside the figures and never subtracted. cv = stddev / mean."),
      scrollTable(table, 'per-case statistics'));
}

// Counter events per case, as `mculab show` prints them: the case once, then its events.
function renderEvents() {
  const groups = eventsByCase(detail);
  eventsSection.hidden = groups.length === 0;
  if (groups.length === 0) return;
  const head = h('tr', {}, h('th', { scope: 'col' }, 'case'), h('th', { scope: 'col' }, 'event'),
      h('th', { scope: 'col', class: 'num col-pass' }, 'pass'), h('th', { scope: 'col', class: 'num col-n' }, 'n'),
      h('th', { scope: 'col', class: 'num col-min' }, 'min'), h('th', { scope: 'col', class: 'num' }, 'median'),
      h('th', { scope: 'col', class: 'num col-max' }, 'max'), h('th', { scope: 'col', class: 'num' }, 'cv'));
  const body = h('tbody', {});
  for (const g of groups) {
    g.rows.forEach((e, i) => {
      body.append(h('tr', { dataset: { caseIndex: g.case }, class: i === 0 ? 'case-first' : null },
          i === 0 ? h('th', { scope: 'rowgroup', rowspan: String(g.rows.length), class: 'case-cell' },
              h('span', { class: 'case-id' }, String(g.id ?? g.case)), h('span', { class: 'params' }, g.params)) : null,
          h('td', { class: 'event-name' }, e.event),
          h('td', { class: 'num col-pass' }, e.pass === null || e.pass === undefined ? '-' : String(e.pass)),
          h('td', { class: 'num col-n' }, formatCount(e.n)),
          h('td', { class: 'num col-min' }, formatNumber(e.min)),
          h('td', { class: 'num' }, formatNumber(e.median)),
          h('td', { class: 'num col-max' }, formatNumber(e.max)),
          h('td', { class: 'num' }, formatPercent(e.cv))));
    });
  }
  const table = h('table', { class: 'data', id: 'events-table' }, h('thead', {}, head), body);
  replaceChildren(eventsSection, h('h2', {}, 'Counter events per case'),
      h('p', { class: 'table-note' }, isEmulated()
        ? 'Counted by the emulator, not a silicon PMU. Each event was counted in the pass shown; cycles in every pass.'
        : 'Each event was counted in the pass shown; cycles in every pass.'),
      scrollTable(table, 'counter events per case'));
}

function cellText(v, column) {
  if (column === 'share' && typeof v === 'number') return `${formatNumber(Math.round(v * 1000) / 10)} %`;
  if (typeof v === 'number') return formatNumber(v);
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (v === null || v === undefined) return '-';
  return JSON.stringify(v);
}

// ops: rows of flat objects (the per-operator profile); columns in the first row's key order.
function renderOps() {
  const ops = Array.isArray(detail.ops) ? detail.ops : [];
  opsSection.hidden = ops.length === 0;
  if (ops.length === 0) return;
  const columns = [];
  for (const row of ops) for (const k of Object.keys(row)) if (!columns.includes(k)) columns.push(k);
  const table = h('table', { class: 'data', id: 'ops-table' },
      h('thead', {}, h('tr', {}, columns.map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, ops.map((row) => h('tr', {},
          columns.map((c) => h('td', { class: [`col-${cssToken(c)}`, typeof row[c] === 'number' ? 'num' : null] }, cellText(row[c], c)))))));
  document.getElementById('layers')?.remove();
  const layers = layerBarsSection(ops);  // a model's layers: bars per event, before the table
  if (layers) {
    // The bars group the profile by layer; the raw rows (one per case, layer and event: 65 for
    // a small model) wait behind a toggle.
    opsSection.before(layers);
    replaceChildren(opsSection, h('h2', {}, 'Per-operator breakdown'),
        h('details', { id: 'ops-raw' },
            h('summary', {}, `All ${formatCount(ops.length)} raw rows (one per case, layer and event)`),
            scrollTable(table, 'per-operator breakdown')));
  } else {
    replaceChildren(opsSection, h('h2', {}, 'Per-operator breakdown'), scrollTable(table, 'per-operator breakdown'));
  }
}

function flatten(obj, prefix, out) {
  for (const [k, v] of Object.entries(obj)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (v && typeof v === 'object' && !Array.isArray(v)) flatten(v, key, out);
    else out.push([key, v]);
  }
  return out;
}

// memory: an object (the memory report); nested objects are shown as dotted keys.
function renderMemory() {
  const m = detail.memory;
  const present = m && typeof m === 'object' && Object.keys(m).length > 0;
  memorySection.hidden = !present;
  if (!present) return;
  const rows = flatten(m, '', []);
  const table = h('table', { class: 'data', id: 'memory-table' },
      h('tbody', {}, rows.map(([k, v]) => h('tr', {}, h('th', { scope: 'row' }, k),
          h('td', { class: typeof v === 'number' ? 'num' : null }, typeof v === 'number' && /bytes$/.test(k) ? `${formatCount(v)} B` : cellText(v))))));
  replaceChildren(memorySection, h('h2', {}, 'Memory'), scrollTable(table, 'memory'));
}

function code(v) {
  return v ? h('code', { class: 'hash' }, v) : null;
}

function renderProvenance() {
  const p = detail.provenance;
  const present = p && p.runner_version;
  provenanceSection.hidden = !present;
  if (!present) return;
  replaceChildren(provenanceSection, h('h2', {}, 'Provenance'), dl([
    ['measured', measuredBadge(p)],
    ['board', p.board ? `${p.board} (${p.board_kind})` : ''],
    ['board serial', p.board_serial],
    ['agent', p.agent],
    ['runner version', p.runner_version],
    ['kernel set', p.kernel_set ? `${p.kernel_set} (asked for: ${detail.kernels || 'fast'})` : ''],
    ['port / cpu', [p.port, p.cpu].filter(Boolean).join(' / ')],
    ['clock', p.clock_hz ? `${formatNumber(p.clock_hz / 1e6)} MHz (${formatCount(p.clock_hz)} Hz)` : ''],
    ['timer unit', p.timer_unit],
    ['counters', p.counters],
    ['toolchain', p.toolchain],
    ['firmware sha256', code(p.firmware_sha256)],
    ['workload sha256', code(p.workload_sha256)],
    ['note', p.note],
  ], 'pairs provenance'));
}

function renderAll() {
  renderBanner();
  renderSummary();
  renderProgress();
  renderDownloads();
  renderCases();
  renderEvents();
  renderOps();
  renderMemory();
  renderProvenance();
}

// ---- plots ------------------------------------------------------------------------------------
function clearPlots() {
  for (const d of destroyPlots) d();
  destroyPlots = [];
  linePlot.replaceChildren();
  histPlot.replaceChildren();
}

async function loadSamples({ force = false } = {}) {
  const c = (detail.cases || []).find((x) => x.index === caseIndex);
  if (!c || !(c.n > 0)) return;  // a case that has not run has no samples to plot
  if (!force && plotted && plotted.caseIndex === caseIndex && plotted.n === c.n) return;
  const wanted = caseIndex;
  let s;
  try {
    s = await apiGet(`jobs/${jobId}/samples`, { case: String(caseIndex), max_points: String(MAX_POINTS), bins: String(HIST_BINS) });
  } catch (err) {
    replaceChildren(plotInfo, messageBox('error', `Samples: ${describeApiError(err)}`));
    return;
  }
  if (wanted !== caseIndex) return;  // the user picked another case meanwhile
  // uPlot wants ascending x; the server sends iteration order, this only guards against a bug.
  const pairs = s.iterations.map((x, i) => [x, s.values[i]]).sort((a, b) => a[0] - b[0]);
  const x = pairs.map((p) => p[0]);
  const y = pairs.map((p) => p[1]);
  let hist = null;
  let histNote = '';
  if (s.histogram && Array.isArray(s.histogram.counts)) {
    hist = histogramFromServer(s.histogram);
    histNote = 'histogram of all samples';
  } else if (!s.downsampled) {
    hist = histogramBins(y, HIST_BINS);
    histNote = 'histogram of all samples';
  }
  const unit = s.unit || unitOf(c);
  replaceChildren(plotInfo,
      `${caseName(c)}: ${formatCount(s.n)} iterations in ${unit}`,
      s.downsampled ? h('span', { class: 'note', id: 'downsampled-note' },
          ` — plot downsampled to ${formatCount(x.length)} points (min and max of each bucket, so spikes stay visible)`) : null,
      hist ? ` — ${histNote}` : h('span', { class: 'note' }, ' — no histogram: the server sent a downsampled series without one'));
  clearPlots();
  try {
    destroyPlots.push(await drawLineChart(linePlot, { x, y, unit }));
    if (hist) destroyPlots.push(await drawHistogram(histPlot, hist, { unit }));
  } catch (err) {
    replaceChildren(linePlot, messageBox('error', String(err.message || err)));
  }
  plotted = { caseIndex, n: c.n };
}

// The running case's values as the stream brings them, redrawn at most once a second.
function drawLive() {
  liveTimer = null;
  const j = detail;
  const finished = !j || FINAL_STATES.includes(j.state);
  if (finished || liveSeries.x.length === 0) {
    liveSection.hidden = true;
    return;
  }
  liveSection.hidden = false;
  const c = (detail.cases || []).find((x) => x.index === liveSeries.caseIndex);
  const unit = (detail.provenance && detail.provenance.timer_unit) || '';
  replaceChildren(liveInfo, `case index ${liveSeries.caseIndex}${c ? ` (id ${c.id})` : ''}: `,
      h('span', { id: 'live-count' }, `${formatCount(liveSeries.received)} values so far`),
      ' (running; the stored values replace this preview when the case finishes)');
  if (liveDestroy) liveDestroy();
  liveDestroy = null;
  livePlot.replaceChildren();
  drawLineChart(livePlot, { x: liveSeries.x.slice(), y: liveSeries.y.slice(), unit })
      .then((d) => { liveDestroy = d; })
      .catch((err) => replaceChildren(livePlot, messageBox('error', String(err.message || err))));
}

onLive('samples', (ev) => {
  if (!detail || ev.id !== jobId) return;
  if (liveSeries.add(ev) && liveTimer === null) liveTimer = setTimeout(drawLive, liveSection.hidden ? 0 : 1000);
});

// ---- loading and live updates -----------------------------------------------------------------
async function refresh() {
  lastRefresh = Date.now();
  try {
    detail = await apiGet(`jobs/${jobId}`);
  } catch (err) {
    replaceChildren(messages, messageBox('error', describeApiError(err)));
    return;
  }
  replaceChildren(messages);
  renderAll();
  await loadSamples();
}

function scheduleRefresh() {
  if (refreshTimer !== null) return;
  const wait = Math.max(0, REFRESH_MS - (Date.now() - lastRefresh));
  refreshTimer = setTimeout(() => {
    refreshTimer = null;
    refresh();
  }, wait);
}

onLive('job', (ev) => {
  if (!detail || ev.id !== jobId) return;
  const j = detail;
  const stateChanged = ev.state !== j.state;
  Object.assign(j, { state: ev.state, progress_done: ev.progress_done, progress_total: ev.progress_total });
  if (ev.message !== undefined) j.message = ev.message;
  if (ev.board) j.assigned_board = ev.board;
  renderProgress();
  if (stateChanged) renderSummary();
  if (FINAL_STATES.includes(ev.state)) liveSection.hidden = true;
  scheduleRefresh();  // new cases, statistics and samples
});
onReconnect(() => refresh());
window.addEventListener('mculab:token', () => refresh());

if (jobId === null) {
  replaceChildren(messages, messageBox('error', 'No job id in the address (expected job.html?id=<number>). Open a job from the ',
      h('a', { href: 'index.html' }, 'history'), '.'));
} else {
  refresh();
}
