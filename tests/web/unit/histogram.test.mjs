// Histogram binning for the job page, and the compare selection list.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { histogramBins, histogramFromServer } from '../../../web/js/histogram.js';
import { toggleId } from '../../../web/js/selection.js';

test('every value lands in exactly one bin, the maximum in the last', () => {
  const values = Array.from({ length: 1000 }, (_, i) => 100 + (i % 97));
  const h = histogramBins(values, 40);
  assert.equal(h.counts.reduce((a, b) => a + b, 0), 1000);
  assert.equal(h.counts.length, 32);  // ceil(sqrt(1000))
  assert.equal(h.edges[0], 100);
  assert.equal(h.edges.at(-1), 196);
  assert.ok(h.counts.at(-1) > 0);
});

test('bins stay between 5 and the maximum', () => {
  assert.equal(histogramBins([1, 2, 3], 40).counts.length, 5);
  assert.equal(histogramBins(Array.from({ length: 100_000 }, (_, i) => i), 40).counts.length, 40);
});

test('identical values (an emulated board) make one bin', () => {
  const h = histogramBins(new Array(20).fill(7437), 40);
  assert.deepEqual(h.counts, [20]);
  assert.deepEqual(h.centers, [7437]);
});

test('non-finite values are ignored and no values give no bins', () => {
  assert.equal(histogramBins([1, NaN, 2, Infinity, 3]).counts.reduce((a, b) => a + b, 0), 3);
  assert.deepEqual(histogramBins([]).counts, []);
});

test('the server histogram is read into the same shape', () => {
  const h = histogramFromServer({ lo: 10, hi: 20, counts: [1, 2, 3, 4, 5] });
  assert.deepEqual(h.centers, [11, 13, 15, 17, 19]);
  assert.equal(h.width, 2);
  assert.deepEqual(histogramFromServer({ lo: 5, hi: 5, counts: [9] }).counts, [9]);
});

test('ticking a job adds it at the end, unticking removes it, never more than the maximum', () => {
  assert.deepEqual(toggleId([], 5), [5]);
  assert.deepEqual(toggleId([5, 9], 12), [5, 9, 12]);
  assert.deepEqual(toggleId([5, 9, 12], 5), [9, 12]);
  assert.deepEqual(toggleId([1, 2], 3, 2), [1, 2]);
});
