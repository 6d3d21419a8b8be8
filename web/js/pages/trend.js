// Trend page: one case's median job after job (same op and parameters, or same custom runner
// and case id, on the same board kind), its 95% intervals as a band, where the runner changed
// and where the level stepped (the server's change points), each step linking to its two jobs
// and their comparison.
import { apiGet, describeApiError } from '../api.js';
import { h, measuredBadge, messageBox, replaceChildren, scrollTable } from '../dom.js';
import { formatNumber, formatTime, paramsText } from '../format.js';
import { initLayout, setTitle } from '../layout.js';
import { onLive, onReconnect, startLive } from '../live.js';
import { drawTrendChart } from '../trend_plot.js';
import {
  changesByAfterJob, compareHref, missingForTrend, parseTrendQuery, shortHash, stepText, trendQueryString,
} from '../trend_model.js';

const layout = initLayout('trend');
setTitle('trend');
startLive(layout.setLive);

const FIELDS = [
  ['kind', 'board kind', 'e.g. host'],
  ['op', 'op', 'e.g. conv2d_s8, custom'],
  ['params', 'parameters', 'e.g. 1,16,32,32,…'],
  ['case', 'case id', 'custom runners, models (0)'],
  ['model', 'model file', 'op model: e.g. kws.tflite'],
  ['label', 'label contains', ''],
  ['user', 'user', ''],
  ['tag', 'tags', 'key=value,…'],
  ['window', 'window (jobs)', '3'],
];
const inputs = {};
const form = h('form', { class: 'trend-form', id: 'trend-form' },
    FIELDS.map(([name, label, placeholder]) => {
      inputs[name] = h('input', { type: 'text', id: `trend-${name}`, name, autocomplete: 'off', placeholder });
      return h('div', { class: 'field' }, h('label', { for: `trend-${name}` }, label), inputs[name]);
    }),
    h('div', { class: 'field' }, h('button', { type: 'submit' }, 'Show')));
const messages = h('div', { id: 'trend-message' });
const results = h('div', { id: 'trend-results' });
replaceChildren(layout.main, h('h1', {}, 'Trend'), form, messages, results);

let destroyChart = null;
let loading = 0;

form.addEventListener('submit', (e) => {
  e.preventDefault();
  const query = {};
  for (const [name] of FIELDS) query[name] = inputs[name].value.trim();
  history.pushState(null, '', `${location.pathname}?${trendQueryString(query)}`);
  load();
});
window.addEventListener('popstate', () => load());
window.addEventListener('mculab:token', () => load());
onReconnect(() => load());
// A job that finishes may join the series: refetch (at most once a second).
let pending = null;
onLive('job', (ev) => {
  if (ev.state !== 'succeeded' || pending) return;
  pending = setTimeout(() => { pending = null; load(); }, 1000);
});

function caseText(res) {
  const s = res.series;
  const parts = [s.op];
  if (Array.isArray(s.params)) parts.push(paramsText(s.param_names, s.params));
  if (s.case !== null && s.case !== undefined) parts.push(`case ${s.case}`);
  if (s.runner) parts.push(`runner ${s.runner}`);
  if (s.model) parts.push(s.model);
  return `${parts.join(' ')} on ${s.kind}`;
}

function changeList(res) {
  const changes = res.changes || [];
  const d = res.detector || {};
  const rule = `a step where the ${d.window} jobs before and the ${d.window} jobs after do not ` +
      `overlap and the level moves by at least ${formatNumber((d.min_step || 0) * 100)} %`;
  if (changes.length === 0) {
    return h('p', { class: 'muted', id: 'trend-no-changes' }, `No change points (${rule}).`);
  }
  return h('div', {},
      h('h2', {}, `Change points (${changes.length})`),
      h('p', { class: 'table-note' }, `Found by the server: ${rule}.`),
      h('ul', { class: 'trend-changes', id: 'trend-changes' }, changes.map((c) => h('li', { dataset: { afterJob: c.after_job } },
          h('span', { class: c.ratio > 1 ? 'step-slower' : 'step-faster' }, stepText(c)), ' between ',
          h('a', { href: `job.html?id=${c.before_job}` }, `#${c.before_job}`), ' and ',
          h('a', { href: `job.html?id=${c.after_job}` }, `#${c.after_job}`), `: ${formatNumber(c.before)} → ${formatNumber(c.after)} ${res.unit} · `,
          h('a', { class: 'compare-link', href: compareHref(c) }, 'compare')))));
}

function jobsTable(res) {
  const steps = changesByAfterJob(res);
  const unit = res.unit || '';
  const head = h('tr', {}, [['job', 'col-id'], ['submitted', 'col-created'], ['board', 'col-board'],
    [`median (${unit})`, 'num'], ['95% interval', 'col-interval'], ['n', 'col-n num'], ['runner', 'col-runner'],
    ['change', 'col-change'], ['label', 'col-label']].map(([t, c]) => h('th', { scope: 'col', class: c }, t)));
  const body = h('tbody', {}, (res.jobs || []).map((j) => {
    const step = steps.get(j.id);
    return h('tr', { dataset: { jobId: j.id }, class: step ? 'change-point' : null },
        h('td', { class: 'col-id' }, h('a', { href: `job.html?id=${j.id}&case=${j.case_index}` }, `#${j.id}`)),
        h('td', { class: 'col-created' }, formatTime(j.created_ms)),
        h('td', { class: 'col-board' }, j.board || '-', ' ', measuredBadge(j)),
        h('td', { class: 'num' }, formatNumber(j.median)),
        h('td', { class: 'col-interval' }, `[${formatNumber(j.lo)}, ${formatNumber(j.hi)}]`),
        h('td', { class: 'col-n num' }, String(j.n)),
        h('td', { class: 'col-runner', title: j.firmware_sha256 || '' },
            [j.runner_name, j.runner_version, shortHash(j.firmware_sha256),
              j.model_sha256 ? `model ${shortHash(j.model_sha256)}` : ''].filter(Boolean).join(' '),
            j.runner_changed ? h('span', { class: 'runner-changed' }, j.model_changed ? ' model file changed' : ' changed') : null),
        h('td', { class: 'col-change' }, step
          ? h('a', { class: step.ratio > 1 ? 'step-slower' : 'step-faster', href: compareHref(step) }, stepText(step))
          : ''),
        h('td', { class: 'col-label' }, j.label || '',
            j.branch || j.commit ? h('span', { class: 'sub col-code', title: j.commit || null },
              [j.branch, j.commit ? j.commit.slice(0, 8) : ''].filter(Boolean).join(' @ ')) : null));
  }));
  return scrollTable(h('table', { class: 'data', id: 'trend-table' }, h('thead', {}, head), body), 'jobs of the series');
}

async function load() {
  const query = parseTrendQuery(location.search);
  for (const [name] of FIELDS) inputs[name].value = query[name] || '';
  const missing = missingForTrend(query);
  if (missing) {
    if (destroyChart) { destroyChart(); destroyChart = null; }
    replaceChildren(results);
    replaceChildren(messages, messageBox('info', `${missing} A job page links to the series of each of its cases ("trend").`));
    return;
  }
  const mine = ++loading;
  document.body.classList.add('loading');
  let res;
  try {
    res = await apiGet('series', Object.fromEntries(new URLSearchParams(trendQueryString(query))));
  } catch (err) {
    if (mine !== loading) return;
    replaceChildren(results);
    replaceChildren(messages, messageBox('error', describeApiError(err)));
    return;
  } finally {
    if (mine === loading) document.body.classList.remove('loading');
  }
  if (mine !== loading) return;
  setTitle(`trend · ${res.series.op}`);
  replaceChildren(messages);
  if (destroyChart) { destroyChart(); destroyChart = null; }
  const jobs = res.jobs || [];
  const summary = h('p', { class: 'trend-summary', id: 'trend-summary' },
      h('strong', {}, caseText(res)), ` · ${jobs.length} job${jobs.length === 1 ? '' : 's'}`,
      res.unit ? ` · medians in ${res.unit} with bootstrap 95 % intervals` : '');
  if (jobs.length === 0) {
    replaceChildren(results, summary, messageBox('info', 'No succeeded job of this case matches.'));
    return;
  }
  const plot = h('div', { class: 'trend-plot', id: 'trend-plot', role: 'img', 'aria-label': `median of ${caseText(res)} per job` });
  const key = h('p', { class: 'trend-key' },
      h('span', {}, h('span', { class: 'swatch swatch-median' }), 'median'),
      h('span', {}, h('span', { class: 'swatch swatch-band' }), '95 % interval'),
      h('span', {}, h('span', { class: 'swatch swatch-runner' }), 'runner or firmware changed'),
      h('span', {}, h('span', { class: 'swatch swatch-change' }), 'change point'));
  // With jobs that know their commit (`mculab submit --commit`, or a CI's variables), the x-axis
  // can name the commits instead of the jobs.
  const byCommit = jobs.some((j) => j.commit);
  const axis = h('select', { id: 'trend-x', 'aria-label': 'x-axis' },
      h('option', { value: 'job' }, 'jobs'), h('option', { value: 'commit' }, 'commits'));
  const draw = async () => {
    if (destroyChart) { destroyChart(); destroyChart = null; }
    try {
      destroyChart = await drawTrendChart(plot, res, axis.value);
    } catch (err) {
      replaceChildren(plot, messageBox('error', err.message));
    }
  };
  axis.addEventListener('change', draw);
  replaceChildren(results, summary,
      h('div', { class: 'card' }, plot, key,
          byCommit ? h('p', { class: 'trend-axis' }, h('label', { for: 'trend-x' }, 'x-axis: '), axis) : null),
      changeList(res), h('h2', {}, 'Jobs'), jobsTable(res));
  await draw();
}

load();
