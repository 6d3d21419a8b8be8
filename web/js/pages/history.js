// History page: the job table with the API's filters, sortable columns, server-side paging and
// the compare selection. Only one page of jobs is ever fetched (GET /api/v1/jobs with
// limit/offset), so it behaves the same with 100 or 100,000 jobs.
import { apiGet, describeApiError } from '../api.js';
import { badge, h, measuredBadge, messageBox, replaceChildren, scrollTable } from '../dom.js';
import { formatCount, formatProgress, formatTime } from '../format.js';
import { initLayout, setTitle } from '../layout.js';
import { onLive, onReconnect, startLive } from '../live.js';
import {
  DEFAULT_HISTORY, JOB_STATES, PAGE_SIZES, STATE_GROUPS, historyQueryString, jobsApiParams,
  pageInfo, parseHistoryQuery, withFilters, withSort,
} from '../query.js';
import { MAX_COMPARE, loadSelection, saveSelection, toggleId } from '../selection.js';
import { compareHref, stepText, trendQueryString } from '../trend_model.js';

const layout = initLayout('history');
setTitle('history');
startLive(layout.setLive);

let state = parseHistoryQuery(location.search);
let selection = loadSelection();
let reply = null;  // the last GET /api/v1/jobs answer
let inflight = null;
const rows = new Map();  // job id -> {job, tr}

// Columns: [key, heading, sort key or null].
// Columns: [key, heading, sort key or null]. The first few are what a phone shows before
// scrolling sideways: pick box, job, state, label.
const COLUMNS = [
  ['select', 'compare', null],
  ['id', 'job', 'id'],
  ['state', 'state', 'state'],
  ['measured', 'measured', null],
  ['label', 'label', null],
  ['op', 'op', 'op'],
  ['board', 'board / kind', 'board'],
  ['user', 'user', 'user'],
  ['created', 'submitted', 'created'],
  ['progress', 'progress', null],
  ['size', 'cases × iter.', null],
];

// ---- static structure -------------------------------------------------------------------------
const fields = {};
function textField(name, label, extra = {}) {
  fields[name] = h('input', { type: 'text', id: `f-${name}`, name, autocomplete: 'off', ...extra });
  return h('div', { class: 'field' }, h('label', { for: `f-${name}` }, label), fields[name]);
}
function dateField(name, label) {
  fields[name] = h('input', { type: 'date', id: `f-${name}`, name });
  return h('div', { class: 'field' }, h('label', { for: `f-${name}` }, label), fields[name]);
}
function stateField() {
  const options = [h('option', { value: '' }, 'any')];
  for (const g of Object.keys(STATE_GROUPS)) options.push(h('option', { value: g }, `${g} (${STATE_GROUPS[g].join(', ')})`));
  for (const s of JOB_STATES) options.push(h('option', { value: s }, s));
  fields.state = h('select', { id: 'f-state', name: 'state' }, options);
  return h('div', { class: 'field' }, h('label', { for: 'f-state' }, 'state'), fields.state);
}
function changedField() {
  fields.changed = h('input', { type: 'checkbox', id: 'f-changed', name: 'changed' });
  return h('div', { class: 'field field-check' }, h('label', { for: 'f-changed' }, fields.changed,
      ' only jobs at a change point'));
}
function limitField() {
  fields.limit = h('select', { id: 'f-limit', name: 'limit' },
      PAGE_SIZES.map((n) => h('option', { value: String(n) }, String(n))));
  return h('div', { class: 'field' }, h('label', { for: 'f-limit' }, 'per page'), fields.limit);
}

const boardList = h('datalist', { id: 'board-names' });
const kindList = h('datalist', { id: 'kind-names' });
const form = h('form', { class: 'filters', id: 'filters', role: 'search', 'aria-label': 'job filters' },
    textField('user', 'user'),
    textField('board', 'board', { list: 'board-names' }),
    textField('kind', 'kind', { list: 'kind-names' }),
    textField('op', 'op'),
    textField('model', 'model file'),
    textField('branch', 'branch'),
    textField('commit', 'commit'),
    stateField(),
    textField('label', 'label contains'),
    dateField('from', 'submitted from (UTC)'),
    dateField('to', 'submitted to (UTC)'),
    changedField(),
    limitField(),
    h('div', { class: 'field field-buttons' },
        h('button', { type: 'submit', id: 'apply-filters' }, 'Apply'),
        h('button', { type: 'button', id: 'clear-filters', on: { click: clearFilters } }, 'Clear')),
    boardList, kindList);

const selectionBar = h('div', { class: 'selection-bar', id: 'selection', 'aria-live': 'polite' });
const summary = h('p', { class: 'summary', id: 'summary', 'aria-live': 'polite' });
const messages = h('div', { id: 'history-message' });
const tableHolder = h('div', { id: 'jobs-holder' });
const pagerTop = h('nav', { class: 'pager', 'aria-label': 'pages of jobs (top)' });
const pagerBottom = h('nav', { class: 'pager', id: 'pager', 'aria-label': 'pages of jobs' });

// On a phone the filters start folded so the list is on the first screen.
const filterCount = h('span', { class: 'muted' });
const filtersBox = h('details', { class: 'filters-box', id: 'filters-box',
  open: !window.matchMedia('(max-width: 640px)').matches },
h('summary', {}, 'Filters ', filterCount), form);

replaceChildren(layout.main,
    h('h1', {}, 'Job history'),
    filtersBox,
    selectionBar,
    h('div', { class: 'list-head' }, summary, pagerTop),
    messages,
    tableHolder,
    pagerBottom);

// ---- filters ----------------------------------------------------------------------------------
function syncForm() {
  for (const name of ['user', 'board', 'kind', 'op', 'model', 'branch', 'commit', 'label', 'from', 'to']) fields[name].value = state[name];
  fields.state.value = state.state;
  if (fields.state.value !== state.state) {  // a comma list that is not one of the options
    fields.state.append(h('option', { value: state.state }, state.state));
    fields.state.value = state.state;
  }
  fields.limit.value = String(state.limit);
  fields.changed.checked = state.changed === '1';
  updateFilterCount();
}

function updateFilterCount() {
  const active = ['user', 'board', 'kind', 'op', 'model', 'branch', 'commit', 'label', 'state', 'from', 'to', 'changed'].filter((k) => state[k]).length;
  filterCount.textContent = active ? `(${active} active)` : '';
}

function readForm() {
  const v = {};
  for (const name of ['user', 'board', 'kind', 'op', 'model', 'branch', 'commit', 'label']) v[name] = fields[name].value.trim();
  v.state = fields.state.value;
  v.from = fields.from.value;
  v.to = fields.to.value;
  v.limit = Number(fields.limit.value);
  v.changed = fields.changed.checked ? '1' : '';
  return v;
}

function applyForm() {
  const next = withFilters(state, readForm());
  if (historyQueryString(next) === historyQueryString(state)) return;
  state = next;
  load({ push: true });
}

function clearFilters() {
  state = { ...DEFAULT_HISTORY, sort: state.sort, order: state.order, limit: state.limit };
  syncForm();
  load({ push: true });
}

form.addEventListener('submit', (e) => {
  e.preventDefault();
  applyForm();
});
form.addEventListener('change', applyForm);

// ---- selection --------------------------------------------------------------------------------
function renderSelection() {
  if (selection.length === 0) {
    replaceChildren(selectionBar, h('span', { class: 'hint' },
        `Tick up to ${MAX_COMPARE} jobs to compare them; the first one ticked is the baseline.`));
    return;
  }
  const href = `compare.html?jobs=${selection.join(',')}`;
  replaceChildren(selectionBar,
      h('span', {}, 'Compare: '),
      selection.map((id, i) => h('span', { class: 'chip' }, `#${id}${i === 0 ? ' (baseline)' : ''}`)),
      selection.length >= 2
        ? h('a', { class: 'button primary', id: 'compare-selected', href }, `Compare ${selection.length} jobs`)
        : h('span', { class: 'hint' }, 'tick one more job'),
      h('button', { type: 'button', id: 'clear-selection', on: { click: () => {
        selection = [];
        saveSelection(selection);
        renderSelection();
        for (const { tr } of rows.values()) tr.querySelector('input[type=checkbox]').checked = false;
      } } }, 'Clear'));
}

// ---- table ------------------------------------------------------------------------------------
function headerCell([key, heading, sortKey]) {
  if (!sortKey) return h('th', { scope: 'col', class: `col-${key}` }, heading);
  const active = state.sort === sortKey;
  const arrow = active ? (state.order === 'desc' ? '▼' : '▲') : '↕';
  return h('th', {
    scope: 'col',
    class: `col-${key}`,
    'aria-sort': active ? (state.order === 'desc' ? 'descending' : 'ascending') : 'none',
  }, h('button', {
    type: 'button', class: 'sort', dataset: { sort: sortKey },
    on: { click: () => { state = withSort(state, sortKey); load({ push: true }); } },
  }, heading, h('span', { class: 'sort-arrow', 'aria-hidden': 'true' }, ` ${arrow}`)));
}

function progressCell(job) {
  const td = h('td', { class: 'col-progress' });
  if (job.progress_total > 0 && job.state === 'running') {
    td.append(h('progress', { max: String(job.progress_total), value: String(job.progress_done) }), ' ');
  }
  if (!(job.progress_total > 0)) td.append('-');
  else if (job.progress_done >= job.progress_total) td.append('done');
  else td.append(formatProgress(job.progress_done, job.progress_total));
  return td;
}

// With the "changed" filter: each case whose series steps at this job, linking to the series and
// to the comparison with the job before the step.
function changeNotes(job) {
  if (!Array.isArray(job.changes) || job.changes.length === 0) return null;
  return h('ul', { class: 'change-notes' }, job.changes.map((c) => h('li', {},
      h('a', { class: 'trend-link', href: `trend.html?${trendQueryString({
        kind: c.series.kind, op: c.series.op, params: c.series.params ? c.series.params.join(',') : '',
        case: c.series.case === null ? '' : String(c.series.case), runner: c.series.runner,
      })}` }, `case ${c.case_id}: ${stepText(c)}`), ' · ',
      h('a', { class: 'compare-link', href: compareHref(c) }, `vs #${c.before_job}`))));
}

function jobRow(job) {
  const box = h('input', {
    type: 'checkbox', checked: selection.includes(job.id),
    'aria-label': `select job ${job.id} for comparing`,
  });
  box.addEventListener('change', () => {
    const next = toggleId(selection, job.id);
    if (next.length === selection.length && box.checked) {
      box.checked = false;  // already MAX_COMPARE picked
      return;
    }
    selection = next;
    saveSelection(selection);
    renderSelection();
  });
  const board = job.assigned_board || job.board || '-';
  const cells = {
    select: h('td', { class: 'col-select' }, box),
    id: h('td', { class: 'col-id' }, h('a', { href: `job.html?id=${job.id}` }, `#${job.id}`)),
    state: h('td', { class: 'col-state' }, badge('state', job.state)),
    label: h('td', { class: 'col-label', title: job.label || null }, job.label || '', changeNotes(job),
        job.branch || job.commit ? h('span', { class: 'sub col-code', title: job.commit ? `commit ${job.commit}` : null },
          [job.branch, job.commit ? job.commit.slice(0, 8) : ''].filter(Boolean).join(' @ ')) : null),
    op: h('td', { class: 'col-op', title: job.model_sha256 ? `model SHA-256 ${job.model_sha256}` : null }, job.op || '-',
        job.model_name ? h('span', { class: 'sub col-model' }, job.model_name) : null),
    board: h('td', { class: 'col-board' }, board, h('span', { class: 'sub col-kind' }, job.kind || '-')),
    user: h('td', { class: 'col-user' }, job.user || '-'),
    created: h('td', { class: 'col-created nowrap' }, formatTime(job.created_ms)),
    progress: progressCell(job),
    size: h('td', { class: 'col-size num' }, `${job.num_cases} × ${job.iterations}`),
    measured: h('td', { class: 'col-measured' }, measuredBadge(job)),
  };
  return h('tr', { dataset: { jobId: job.id } }, COLUMNS.map(([key]) => cells[key]));
}

function renderPager(nav, info) {
  const go = (offset) => () => { state = { ...state, offset }; load({ push: true }); };
  replaceChildren(nav,
      h('button', { type: 'button', class: 'page-first', disabled: !info.hasPrev, on: { click: go(0) } }, '« first'),
      h('button', { type: 'button', class: 'page-prev', disabled: !info.hasPrev, on: { click: go(info.prevOffset) } }, '‹ prev'),
      h('span', { class: 'page-of' }, `page ${formatCount(info.page)} of ${formatCount(info.pages)}`),
      h('button', { type: 'button', class: 'page-next', disabled: !info.hasNext, on: { click: go(info.nextOffset) } }, 'next ›'),
      h('button', { type: 'button', class: 'page-last', disabled: !info.hasNext, on: { click: go(info.lastOffset) } }, 'last »'));
}

function render() {
  rows.clear();
  const info = pageInfo(reply.total, state.offset, state.limit);
  summary.textContent = reply.total === 0 ? 'No jobs match these filters.'
    : `Jobs ${formatCount(info.first)}–${formatCount(info.last)} of ${formatCount(reply.total)}`;
  if (state.changed) {
    summary.textContent = `${formatCount(reply.total)} job${reply.total === 1 ? '' : 's'} at a change point ` +
        `among the newest ${formatCount(reply.scanned)} succeeded jobs that match` +
        `${reply.truncated ? ' (only the newest jobs\' series were searched)' : ''}.`;
  }
  renderPager(pagerTop, info);
  renderPager(pagerBottom, info);
  const tbody = h('tbody', {});
  for (const job of reply.jobs) {
    const tr = jobRow(job);
    rows.set(job.id, { job, tr });
    tbody.append(tr);
  }
  const table = h('table', { class: 'data jobs', id: 'jobs-table' },
      h('thead', {}, h('tr', {}, COLUMNS.map(headerCell))),
      tbody);
  replaceChildren(tableHolder, scrollTable(table, 'jobs'));
}

async function load({ push = false } = {}) {
  updateFilterCount();
  const qs = historyQueryString(state);
  const url = `${location.pathname}${qs}`;
  if (push && `${location.pathname}${location.search}` !== url) history.pushState(null, '', url);
  else history.replaceState(null, '', url);
  if (inflight) inflight.abort();
  const ctrl = new AbortController();
  inflight = ctrl;
  document.body.classList.add('loading');
  try {
    const res = state.changed
      ? await apiGet('changes', jobsApiParams({ ...state, offset: 0 }), { signal: ctrl.signal })
      : await apiGet('jobs', jobsApiParams(state), { signal: ctrl.signal });
    if (inflight !== ctrl) return;
    if (res.jobs.length === 0 && res.total > 0 && state.offset > 0) {
      // Filters shrank the list under the current page: show its last page instead.
      state = { ...state, offset: pageInfo(res.total, 0, state.limit).lastOffset };
      load();
      return;
    }
    reply = res;
    replaceChildren(messages);
    render();
  } catch (err) {
    if (ctrl.signal.aborted) return;
    replaceChildren(messages, messageBox('error', describeApiError(err)));
  } finally {
    if (inflight === ctrl) {
      inflight = null;
      document.body.classList.remove('loading');
    }
  }
}

// ---- live updates -----------------------------------------------------------------------------
onLive('job', (ev) => {
  const row = rows.get(ev.id);
  if (!row) {
    const newest = reply && reply.jobs.length ? Math.max(...reply.jobs.map((j) => j.id)) : 0;
    if (ev.id > newest && !document.getElementById('new-jobs')) {
      messages.append(messageBox('info', 'Jobs changed since this list was loaded. ',
          h('button', { type: 'button', id: 'new-jobs', on: { click: () => load() } }, 'Refresh')));
    }
    return;
  }
  const job = { ...row.job, state: ev.state, progress_done: ev.progress_done,
    progress_total: ev.progress_total, message: ev.message };
  if (ev.board) job.assigned_board = ev.board;
  const tr = jobRow(job);
  row.tr.replaceWith(tr);
  rows.set(ev.id, { job, tr });
});
onReconnect(() => load());
window.addEventListener('mculab:token', () => load());
window.addEventListener('popstate', () => {
  state = parseHistoryQuery(location.search);
  syncForm();
  load();
});

async function loadBoardNames() {
  try {
    const { boards } = await apiGet('boards');
    replaceChildren(boardList, boards.map((b) => h('option', { value: b.name })));
    replaceChildren(kindList, [...new Set(boards.map((b) => b.kind))].map((k) => h('option', { value: k })));
  } catch {
    // suggestions only: the filters work without them
  }
}

syncForm();
renderSelection();
load();
loadBoardNames();
