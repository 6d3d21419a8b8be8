// The per-layer model of the job and compare pages (web/js/layers.js).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { commonMetrics, compareLayers, isLayerProfile, layerMetrics, layerRows } from '../../../web/js/layers.js';
import { layerOps } from '../fixture_data.mjs';

test('a per-layer profile is told from the older per-op rows', () => {
  assert.ok(isLayerProfile(layerOps(1)));
  assert.ok(!isLayerProfile([{ name: 'requantize', calls: 4, cycles: 51_300, share: 0.2 }]));
  assert.ok(!isLayerProfile([]));
  assert.ok(!isLayerProfile(null));
});

test('metrics put the timer first and layers come in graph order with their shares', () => {
  const ops = layerOps(1).reverse();
  assert.deepEqual(layerMetrics(ops), ['cycles', 'instructions']);
  const rows = layerRows(ops, 'cycles');
  assert.deepEqual(rows.map((r) => r.op_index), [0, 1, 2, 3, 4, 5, 6]);
  assert.equal(rows[0].type, 'CONV_2D');
  assert.equal(rows[0].mean, 40_000);
  assert.ok(Math.abs(rows.reduce((a, r) => a + r.share, 0) - 1) < 1e-9);
  assert.equal(rows[5].name, '<b>fc</b>');
});

test('only the first case is drawn when a profile has several', () => {
  const two = [...layerOps(1), ...layerOps(1).map((r) => ({ ...r, case: 1, mean: r.mean * 2 }))];
  assert.equal(layerRows(two, 'cycles').length, 7);
  assert.equal(layerRows(two, 'cycles')[0].mean, 40_000);
});

test('two jobs compare layer by layer: ratio of the means, mismatched graphs flagged', () => {
  const rows = compareLayers(layerOps(1), layerOps(0.5), 'cycles');
  assert.equal(rows.length, 7);
  assert.equal(rows[0].ratio, 0.5);
  assert.equal(rows[3].ratio, 1);
  assert.ok(rows.every((r) => r.sameType));
  const other = layerOps(1).map((r) => (r.op_index === 3 ? { ...r, type: 'MAX_POOL_2D' } : r));
  const mixed = compareLayers(layerOps(1), other, 'cycles');
  assert.equal(mixed.filter((r) => !r.sameType).length, 1);
  const shorter = layerOps(1).filter((r) => r.op_index < 5);
  const uneven = compareLayers(layerOps(1), shorter, 'cycles');
  assert.equal(uneven.length, 7);
  assert.equal(uneven[6].b, null);
  assert.equal(uneven[6].ratio, null);
  assert.deepEqual(commonMetrics(layerOps(1), layerOps(1).filter((r) => r.metric === 'cycles')), ['cycles']);
});
