// The trend view's pure parts (web/js/trend_model.js).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  changeMarkX, changesByAfterJob, compareHref, missingForTrend, parseTrendQuery, plotData,
  runnerChangeIndexes, shortHash, stepText, trendHref, trendQueryString,
} from '../../../web/js/trend_model.js';

const SERIES = {
  series: { kind: 'host', op: 'fully_connected_s8', params: [1, 8, 4] },
  unit: 'ns',
  jobs: [
    { id: 5, median: 100, lo: 98, hi: 102, runner_changed: false },
    { id: 6, median: 101, lo: 99, hi: 103, runner_changed: false },
    { id: 9, median: 150, lo: 149, hi: 151, runner_changed: true },
  ],
  changes: [{ index: 2, before_job: 6, after_job: 9, before: 100.5, after: 150, ratio: 1.5 }],
};

test('the page address names the series; empty parameters are left out', () => {
  assert.deepEqual(parseTrendQuery('?kind=host&op=conv2d_s8&params=1,2,3&label=&window=4'),
      { kind: 'host', op: 'conv2d_s8', params: '1,2,3', window: '4' });
  assert.equal(trendQueryString({ op: 'x y', kind: 'host', case: '7' }), 'kind=host&op=x+y&case=7');
});

test('a series needs a kind, an op and the case', () => {
  assert.equal(missingForTrend({ kind: 'host', op: 'a', params: '1' }), null);
  assert.equal(missingForTrend({ kind: 'host', op: 'custom', case: '3', runner: 'r.elf' }), null);
  assert.match(missingForTrend({ kind: 'host', op: 'custom', case: '3' }), /runner's file name/);
  assert.match(missingForTrend({ kind: 'host' }), /an op.*parameters/);
  assert.match(missingForTrend({}), /board kind/);
  assert.match(missingForTrend({ kind: 'host', op: 'model', case: '0' }), /model's file name/);
  assert.equal(missingForTrend({ kind: 'host', op: 'model', case: '0', model: 'kws.tflite' }), null);
});

test("a job's case links to its series by parameters, or by case id without them", () => {
  const job = { kind: 'corstone300-qemu', op: 'conv2d_s8' };
  assert.equal(trendHref(job, { id: 4, params: [1, 16, 32] }),
      'trend.html?kind=corstone300-qemu&op=conv2d_s8&params=1%2C16%2C32');
  assert.equal(trendHref({ kind: 'host', op: 'custom', runner_name: 'my runner' }, { id: 12, params: [] }),
      'trend.html?kind=host&op=custom&case=12&runner=my+runner');
  // A model job's series is its model's.
  assert.equal(trendHref({ kind: 'host', op: 'model', model_name: 'kws.tflite' }, { id: 0, params: [] }),
      'trend.html?kind=host&op=model&case=0&model=kws.tflite');
});

test('the plot gets positions, medians and the interval band; marks sit between jobs', () => {
  assert.deepEqual(plotData(SERIES), [[0, 1, 2], [100, 101, 150], [98, 99, 149], [102, 103, 151]]);
  assert.deepEqual(runnerChangeIndexes(SERIES), [2]);
  assert.equal(changeMarkX(SERIES.changes[0]), 1.5);
  assert.deepEqual(plotData({ jobs: [] }), [[], [], [], []]);
});

test('a change point links to both jobs and their comparison, and says which way it went', () => {
  assert.equal(compareHref(SERIES.changes[0]), 'compare.html?jobs=6,9');
  assert.equal(stepText(SERIES.changes[0]), '+50.0 % (slower)');
  assert.equal(stepText({ ratio: 0.8 }), '−20.0 % (faster)');
  assert.equal(changesByAfterJob(SERIES).get(9).before_job, 6);
  assert.equal(shortHash('9f2c0a1b2c3d'), '9f2c0a1b');
  assert.equal(shortHash(''), '-');
});

test("the history's changed filter is part of its address", async () => {
  const q = await import('../../../web/js/query.js');
  const s = q.parseHistoryQuery('?changed=1&op=conv2d_s8');
  assert.equal(s.changed, '1');
  assert.equal(q.historyQueryString(s), '?op=conv2d_s8&changed=1');
  assert.equal(q.parseHistoryQuery('?changed=yes').changed, '');
});

test('the x-axis names a job by its id, or by its commit when asked and known', async () => {
  const { xTickLabel } = await import('../../../web/js/trend_model.js');
  assert.equal(xTickLabel({ id: 7, commit: '' }, 'commit'), '#7');
  assert.equal(xTickLabel({ id: 7, commit: '0123456789abcdef' }, 'commit'), '0123456');
  assert.equal(xTickLabel({ id: 7, commit: '0123456789abcdef' }, 'job'), '#7');
  assert.equal(xTickLabel(undefined, 'job'), '');
});
