// The CSV export: the operator-benchmark layout of `mculab export --csv`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildCsv, buildJson, exportFileName, exportUnitFor } from '../../../web/js/csv.js';

const detail = (timerUnit, cases) => ({
  id: 7,
  provenance: timerUnit === null ? null : { timer_unit: timerUnit },
  cases,
});

test('cycles are exported as they are, one "id,median" line per case', () => {
  const csv = buildCsv(detail('cycles', [
    { id: 0, unit: 'cycles', median: 7437 },
    { id: 3, unit: 'cycles', median: 130114.5 },
  ]));
  assert.equal(csv, 'id,cycles\n0,7437\n3,130114.5\n');
});

test('nanoseconds are exported in microseconds like the CLI', () => {
  const csv = buildCsv(detail('ns', [{ id: 0, unit: 'ns', median: 66334.5 }, { id: 1, unit: 'ns', median: 250 }]));
  assert.equal(csv, 'id,us\n0,66.335\n1,0.25\n');
});

test('an unknown timer unit is exported as cycles, instructions as instructions, as the CLI does', () => {
  assert.deepEqual(exportUnitFor('ticks'), { unit: 'cycles', divideBy: 1 });
  assert.deepEqual(exportUnitFor('instructions'), { unit: 'instructions', divideBy: 1 }, 'an emulated board counts instructions, not cycles');
  assert.deepEqual(exportUnitFor('us'), { unit: 'us', divideBy: 1 });
  assert.deepEqual(exportUnitFor('ms'), { unit: 'ms', divideBy: 1 });
});

test('without provenance the unit comes from the cases', () => {
  assert.equal(buildCsv(detail(null, [{ id: 2, unit: 'ns', median: 1000 }])), 'id,us\n2,1\n');
});

test('a job without cases exports only the header', () => {
  assert.equal(buildCsv(detail('cycles', [])), 'id,cycles\n');
});

test('the JSON download is the job API object', () => {
  const d = detail('ns', [{ id: 1, median: 2 }]);
  assert.deepEqual(JSON.parse(buildJson(d)), d);
});

test('file names carry the job id and nothing from user input', () => {
  assert.equal(exportFileName(42, 'csv'), 'mculab-job-42.csv');
  assert.equal(exportFileName('../x', 'json'), 'mculab-job-unknown.json');
});
