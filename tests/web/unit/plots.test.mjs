// Tick labels of the job page's plots: short, and never two alike.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compactLabels } from '../../../web/js/plots.js';

test('large values are shortened with k/M and keep neighbouring ticks apart', () => {
  assert.deepEqual(compactLabels([0, 50000, 100000]), ['0', '50k', '100k']);
  assert.deepEqual(compactLabels([169500, 170000, 170500, 171000]), ['169.5k', '170k', '170.5k', '171k']);
  assert.deepEqual(compactLabels([20e6, 30e6]), ['20M', '30M']);
});

test('small values are left as they are', () => {
  assert.deepEqual(compactLabels([0, 25, 50]), ['0', '25', '50']);
  assert.deepEqual(compactLabels([1.5, 2, 2.5]), ['1.5', '2', '2.5']);
  assert.deepEqual(compactLabels([null, 10, 20]), ['', '10', '20']);
  assert.deepEqual(compactLabels([0, 2.5, 5, 7.5]), ['0', '2.5', '5', '7.5'], 'never rounded to a wrong tick');
});
