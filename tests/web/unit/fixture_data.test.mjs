// The fixture server's answers follow docs/http-api.md (paging, filters, errors, downsampling,
// bootstrap), so browser tests against it mean something. Runs the route logic without sockets.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bootstrapRatio, downsample, summarize } from '../fixture_data.mjs';
import { createLab } from '../fixture_server.mjs';

const lab = createLab({ jobs: 1000 });
const list = (params) => lab.listJobs(new URLSearchParams(params));

test('paging returns at most limit jobs and the total of all matches', () => {
  const page = list('limit=20&offset=40');
  assert.equal(page.jobs.length, 20);
  assert.equal(page.total, lab.lab.jobs.length);
  assert.equal(page.jobs[0].id, lab.lab.jobs.length - 40);
});

test('filters narrow the list and every job matches them', () => {
  const all = list('limit=1').total;
  const page = list('op=fully_connected_s8&state=succeeded&limit=500');
  assert.ok(page.total > 0 && page.total < all);
  for (const j of page.jobs) assert.deepEqual([j.op, j.state], ['fully_connected_s8', 'succeeded']);
  assert.equal(list('label=%3Cimg&limit=5').total, 1);
});

test('sorting orders the whole list, ties broken by id', () => {
  const page = list('sort=user&order=asc&limit=500');
  for (let i = 1; i < page.jobs.length; i++) {
    const [a, b] = [page.jobs[i - 1], page.jobs[i]];
    assert.ok(a.user < b.user || (a.user === b.user && a.id < b.id));
  }
});

test('bad parameters are refused with a message', () => {
  assert.throws(() => list('limit=501'), (e) => e.status === 400 && /limit/.test(e.message));
  assert.throws(() => list('sort=label'), (e) => e.status === 400 && /sort/.test(e.message));
  assert.throws(() => list('state=done'), (e) => e.status === 400 && /done/.test(e.message));
  assert.throws(() => lab.getJob('999999'), (e) => e.status === 404);
});

test('downsampling keeps each bucket\'s min and max in iteration order', () => {
  const values = Array.from({ length: 10_000 }, (_, i) => (i === 4321 ? 1e6 : 100 + (i % 7)));
  const d = downsample(values, 100);
  assert.ok(d.downsampled);
  assert.ok(d.values.length <= 100);
  assert.ok(d.values.includes(1e6));
  assert.ok(d.iterations.every((x, i) => i === 0 || x > d.iterations[i - 1]));
  assert.equal(downsample([1, 2, 3], 10).downsampled, false);
});

test('the bootstrap interval brackets the ratio and flags clear differences only', () => {
  const a = Array.from({ length: 200 }, (_, i) => 1000 + (i % 10));
  const same = bootstrapRatio(a, a.slice().reverse(), 3);
  assert.ok(same.lo <= 1 && same.hi >= 1 && !same.significant);
  const slower = bootstrapRatio(a, a.map((v) => v * 1.2), 3);
  assert.ok(slower.significant && slower.lo > 1 && slower.lo <= slower.ratio && slower.ratio <= slower.hi);
});

test('statistics follow common/stats.cc: interpolated percentiles, sample stddev', () => {
  const s = summarize([4, 1, 3, 2]);
  assert.deepEqual([s.min, s.median, s.max, s.mean], [1, 2.5, 4, 2.5]);
  assert.ok(Math.abs(s.p90 - 3.7) < 1e-12);
  assert.ok(Math.abs(s.stddev - Math.sqrt(5 / 3)) < 1e-12);
});

test('the bootstrap\'s median without sorting equals the sorted median', async () => {
  const { percentileOfSorted } = await import('../fixture_data.mjs');
  // Identical samples give a degenerate interval at the exact ratio.
  const same = bootstrapRatio([5, 5, 5, 5], [10, 10, 10, 10], 1);
  assert.deepEqual([same.ratio, same.lo, same.hi, same.significant], [2, 2, 2, true]);
  for (const n of [1, 2, 3, 10, 11]) {
    const v = Array.from({ length: n }, (_, i) => (i * 7919) % 13);
    const sorted = Float64Array.from(v).sort();
    assert.equal(summarize(v).median, percentileOfSorted(sorted, 0.5));
    assert.equal(bootstrapRatio(v.map((x) => x + 1), v.map((x) => x + 1), 2).ratio, 1);
  }
});
