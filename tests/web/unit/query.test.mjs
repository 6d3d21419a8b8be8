// The history page's filter state in the address bar and in GET /api/v1/jobs.
import assert from 'node:assert/strict';
import { test } from 'node:test';

process.env.TZ = 'Asia/Kolkata';  // UTC+5:30: date filters are UTC days whatever the zone
const q = await import('../../../web/js/query.js');

test('an empty query string is the default view: newest jobs first, 50 a page', () => {
  assert.deepEqual(q.parseHistoryQuery(''), { ...q.DEFAULT_HISTORY });
  assert.equal(q.historyQueryString(q.DEFAULT_HISTORY), '');
});

test('filters survive a round trip through the query string', () => {
  const s = { ...q.DEFAULT_HISTORY, user: 'ana', op: 'conv2d_s8', model: 'kws.tflite', state: 'failed,timed_out', label: 'try <1>',
    from: '2025-10-01', to: '2025-10-31', sort: 'created', order: 'asc', limit: 100, offset: 200 };
  const text = q.historyQueryString(s);
  assert.ok(text.startsWith('?'));
  assert.deepEqual(q.parseHistoryQuery(text), s);
  assert.equal(q.jobsApiParams(s).get('model'), 'kws.tflite');
});

test('invalid values fall back to defaults instead of reaching the server', () => {
  const s = q.parseHistoryQuery('?sort=drop%20table&order=up&limit=7&offset=-3&from=2025-02-30&to=yesterday&state=running,bogus');
  assert.equal(s.sort, 'id');
  assert.equal(s.order, 'desc');
  assert.equal(s.limit, 50);
  assert.equal(s.offset, 0);
  assert.equal(s.from, '');
  assert.equal(s.to, '');
  assert.equal(s.state, 'running');
});

test('state groups expand to the API\'s comma list', () => {
  const s = q.parseHistoryQuery('?state=active');
  assert.equal(s.state, 'active');
  assert.equal(q.jobsApiParams(s).get('state'), 'queued,assigned,preparing,running');
});

test('date filters become the API\'s inclusive created_ms range of whole UTC days', () => {
  const p = q.jobsApiParams({ ...q.DEFAULT_HISTORY, from: '2025-11-01', to: '2025-11-03' });
  assert.equal(p.get('from'), String(Date.UTC(2025, 10, 1)));
  assert.equal(p.get('to'), String(Date.UTC(2025, 10, 4) - 1));
});

test('API parameters always carry sort, order and paging; empty filters are left out', () => {
  const p = q.jobsApiParams({ ...q.DEFAULT_HISTORY, board: 'an547-0', offset: 50 });
  assert.equal(p.toString(), 'board=an547-0&sort=id&order=desc&limit=50&offset=50');
});

test('clicking the sorted column flips the order; another column sorts descending; both go to page 1', () => {
  const s = { ...q.DEFAULT_HISTORY, offset: 500 };
  const flipped = q.withSort(s, 'id');
  assert.equal(flipped.order, 'asc');
  assert.equal(flipped.offset, 0);
  assert.equal(q.withSort(flipped, 'id').order, 'desc');
  const byUser = q.withSort(flipped, 'user');
  assert.deepEqual([byUser.sort, byUser.order], ['user', 'desc']);
  assert.equal(q.withSort(s, 'label'), s, 'unsortable columns change nothing');
});

test('a changed filter returns to the first page', () => {
  assert.equal(q.withFilters({ ...q.DEFAULT_HISTORY, offset: 300 }, { user: 'ben' }).offset, 0);
});

test('pageInfo counts pages for 100,000 jobs', () => {
  const first = q.pageInfo(100_000, 0, 50);
  assert.deepEqual([first.page, first.pages, first.first, first.last, first.hasPrev, first.hasNext], [1, 2000, 1, 50, false, true]);
  const last = q.pageInfo(100_000, first.lastOffset, 50);
  assert.deepEqual([last.page, last.first, last.last, last.hasNext], [2000, 99_951, 100_000, false]);
  const empty = q.pageInfo(0, 0, 50);
  assert.deepEqual([empty.page, empty.pages, empty.first, empty.last, empty.hasNext], [1, 1, 0, 0, false]);
});

test('compare ids keep their order (the first is the baseline) and drop duplicates', () => {
  assert.deepEqual(q.parseJobIds('12, 5,12 9'), [12, 5, 9]);
});

test('compare ids reject non-numbers, too few and too many', () => {
  assert.throws(() => q.parseJobIds('1,x'), /"x" is not a job id/);
  assert.throws(() => q.parseJobIds('1,-2'), /not a job id/);
  assert.throws(() => q.parseJobIds('4'), /at least 2/);
  assert.throws(() => q.parseJobIds('1,2,3,4,5,6,7,8,9'), /at most 8/);
});

test('a job page id must be a positive integer', () => {
  assert.equal(q.parseJobId('?id=42'), 42);
  assert.equal(q.parseJobId('?id=0'), null);
  assert.equal(q.parseJobId('?id=4e2'), null);
  assert.equal(q.parseJobId(''), null);
});
