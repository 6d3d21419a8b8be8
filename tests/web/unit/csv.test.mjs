// A job's downloads: the JSON document and the files' names (the CSV is the server's:
// tests/web/browser/pages.test.mjs checks the page saves its bytes).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildJson, exportFileName } from '../../../web/js/csv.js';

test('the JSON download is the job API object', () => {
  const d = { id: 7, provenance: { timer_unit: 'ns' }, cases: [{ id: 1, median: 2 }] };
  assert.deepEqual(JSON.parse(buildJson(d)), d);
});

test('file names carry the job id and nothing from user input', () => {
  assert.equal(exportFileName(42, 'csv'), 'mculab-job-42.csv');
  assert.equal(exportFileName('../x', 'json'), 'mculab-job-unknown.json');
});
