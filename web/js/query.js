// The history page's filter state: parsed from and written to the page's query string (so a
// filtered view is a link), and turned into GET /api/v1/jobs parameters. Pure.

export const JOB_STATES = ['queued', 'assigned', 'preparing', 'running', 'succeeded', 'failed',
  'cancelled', 'timed_out'];
// Named groups offered next to the single states in the state filter.
export const STATE_GROUPS = {
  active: ['queued', 'assigned', 'preparing', 'running'],
  finished: ['succeeded', 'failed', 'cancelled', 'timed_out'],
  unsuccessful: ['failed', 'cancelled', 'timed_out'],
};
export const SORT_KEYS = ['id', 'created', 'state', 'op', 'board', 'user'];
export const PAGE_SIZES = [25, 50, 100, 200, 500];
export const TEXT_FILTERS = ['user', 'board', 'kind', 'op', 'model', 'branch', 'commit', 'label'];

export const DEFAULT_HISTORY = Object.freeze({
  user: '', board: '', kind: '', op: '', model: '', branch: '', commit: '', label: '', state: '', from: '', to: '',
  sort: 'id', order: 'desc', limit: 50, offset: 0,
  // '1': only jobs at a change point of one of their cases' series (GET /api/v1/changes).
  changed: '',
});

// "2025-10-31" -> true when it names a real calendar day.
export function isIsoDay(s) {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const t = new Date(Date.UTC(y, mo - 1, d));
  return t.getUTCFullYear() === y && t.getUTCMonth() === mo - 1 && t.getUTCDate() === d;
}

// The first and last millisecond of a UTC calendar day (the API's from/to are inclusive): the
// days the page's times are printed in (formatTime).
export function utcDayStartMs(day) {
  const [y, m, d] = day.split('-').map(Number);
  return Date.UTC(y, m - 1, d);
}
export function utcDayEndMs(day) {
  const [y, m, d] = day.split('-').map(Number);
  return Date.UTC(y, m - 1, d + 1) - 1;
}

// A state filter value: '' (any), one state, a group name, or a comma list of states.
export function normalizeStateFilter(value) {
  if (!value) return '';
  if (Object.hasOwn(STATE_GROUPS, value)) return value;
  const states = value.split(',').map((s) => s.trim()).filter((s) => JOB_STATES.includes(s));
  return [...new Set(states)].join(',');
}

export function stateFilterToApi(value) {
  if (Object.hasOwn(STATE_GROUPS, value)) return STATE_GROUPS[value].join(',');
  return value;
}

function nonNegativeInt(s, fallback) {
  return /^[0-9]{1,15}$/.test(s || '') ? Number(s) : fallback;
}

// Query string (with or without "?") -> a complete, valid filter state. Anything invalid falls
// back to its default rather than reaching the server.
export function parseHistoryQuery(search) {
  const q = new URLSearchParams(search);
  const s = { ...DEFAULT_HISTORY };
  for (const key of TEXT_FILTERS) s[key] = (q.get(key) || '').trim().slice(0, 200);
  s.state = normalizeStateFilter(q.get('state') || '');
  for (const key of ['from', 'to']) {
    const v = q.get(key) || '';
    s[key] = isIsoDay(v) ? v : '';
  }
  s.sort = SORT_KEYS.includes(q.get('sort')) ? q.get('sort') : DEFAULT_HISTORY.sort;
  s.order = q.get('order') === 'asc' ? 'asc' : 'desc';
  const limit = nonNegativeInt(q.get('limit'), DEFAULT_HISTORY.limit);
  s.limit = PAGE_SIZES.includes(limit) ? limit : DEFAULT_HISTORY.limit;
  s.offset = nonNegativeInt(q.get('offset'), 0);
  s.changed = q.get('changed') === '1' ? '1' : '';
  return s;
}

// Filter state -> canonical query string ("" when everything is default, else "?a=b&...").
export function historyQueryString(state) {
  const q = new URLSearchParams();
  for (const key of Object.keys(DEFAULT_HISTORY)) {
    const v = state[key];
    if (v !== undefined && v !== '' && v !== DEFAULT_HISTORY[key]) q.set(key, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

// Filter state -> GET /api/v1/jobs query (dates become the API's inclusive created_ms range).
export function jobsApiParams(state) {
  const q = new URLSearchParams();
  for (const key of TEXT_FILTERS) if (state[key]) q.set(key, state[key]);
  if (state.state) q.set('state', stateFilterToApi(state.state));
  if (state.from) q.set('from', String(utcDayStartMs(state.from)));
  if (state.to) q.set('to', String(utcDayEndMs(state.to)));
  q.set('sort', state.sort);
  q.set('order', state.order);
  q.set('limit', String(state.limit));
  q.set('offset', String(state.offset));
  return q;
}

// Clicking a column header: the same column flips the order, another column sorts by it
// descending (newest / largest first); either way back to the first page.
export function withSort(state, key) {
  if (!SORT_KEYS.includes(key)) return state;
  const order = state.sort === key ? (state.order === 'desc' ? 'asc' : 'desc') : 'desc';
  return { ...state, sort: key, order, offset: 0 };
}

// A changed filter always starts again at the first page.
export function withFilters(state, changes) {
  return { ...state, ...changes, offset: 0 };
}

// Paging arithmetic for "101–150 of 100,000", prev/next/first/last.
export function pageInfo(total, offset, limit) {
  const pages = Math.max(1, Math.ceil(total / limit));
  const page = Math.min(pages, Math.floor(offset / limit) + 1);
  const lastOffset = (pages - 1) * limit;
  return {
    page,
    pages,
    first: total === 0 ? 0 : Math.min(offset + 1, total),
    last: Math.min(offset + limit, total),
    hasPrev: offset > 0,
    hasNext: offset + limit < total,
    prevOffset: Math.max(0, offset - limit),
    nextOffset: offset + limit,
    lastOffset,
  };
}

// "?jobs=3,1,7" -> [3, 1, 7] (order kept: the first is the baseline); throws with a message on
// anything that is not 2..8 distinct positive integer ids.
export function parseJobIds(text, { min = 2, max = 8 } = {}) {
  const parts = String(text || '').split(/[\s,]+/).filter(Boolean);
  const ids = [];
  for (const p of parts) {
    if (!/^[1-9][0-9]{0,15}$/.test(p)) throw new Error(`"${p}" is not a job id`);
    const id = Number(p);
    if (!ids.includes(id)) ids.push(id);
  }
  if (ids.length < min) throw new Error(`pick at least ${min} jobs to compare`);
  if (ids.length > max) throw new Error(`at most ${max} jobs can be compared at once`);
  return ids;
}

// A job id from a page's query string ("?id=42"), or null.
export function parseJobId(search) {
  const v = new URLSearchParams(search).get('id') || '';
  return /^[1-9][0-9]{0,15}$/.test(v) ? Number(v) : null;
}
