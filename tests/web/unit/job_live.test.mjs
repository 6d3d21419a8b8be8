// The job page's pure parts for a waiting or running job: the wait text, the live series of the
// running case (bounded, ascending, a new case starts afresh) and the counter events per case.
import assert from 'node:assert/strict';
import { test } from 'node:test';

const { LiveSeries, MAX_LIVE_POINTS, eventsByCase, waitText } = await import('../../../web/js/job_live.js');

const LEASE = Date.UTC(2026, 11, 1, 18, 0, 0);

test('a job waiting on a reservation names the board, the holder, the lease end and the estimate', () => {
  const text = waitText({ position: 1, board: 'h743-0', holder: 'chen', lease_until_ms: LEASE, note: 'profiling',
    estimated_start_ms: LEASE }, LEASE - 47 * 60_000);
  assert.equal(text, 'Waiting for board h743-0, reserved by chen until 2026-12-01 18:00:00 UTC (profiling). ' +
      'Next in the queue. Estimated start 2026-12-01 18:00:00 UTC (in about 47 min).');
});

test('a job behind others says its position, and when nothing is known, that there is no estimate', () => {
  assert.equal(waitText({ position: 3, estimated_start_ms: 0 }, 0),
      'Queue position 3. No estimate yet (no recent run of this kind and op).');
  assert.equal(waitText(undefined, 0), '');
  assert.equal(waitText({ position: 0 }, 0), '');
});

test('the live series keeps iterations ascending, skips resent ones and restarts on a new case', () => {
  const s = new LiveSeries();
  assert.equal(s.add({ id: 7, case: 0, iterations: [0, 1, 2], values: [10, 11, 12] }), true);
  assert.equal(s.add({ id: 7, case: 0, iterations: [1, 2], values: [11, 12] }), false);  // resent
  s.add({ id: 7, case: 0, iterations: [3], values: [13] });
  assert.deepEqual([s.x, s.y, s.received], [[0, 1, 2, 3], [10, 11, 12, 13], 4]);
  s.add({ id: 7, case: 1, iterations: [0], values: [99] });
  assert.deepEqual([s.caseIndex, s.x, s.y, s.received], [1, [0], [99], 1]);
  assert.equal(s.add({ id: 7, case: 1 }), false);  // malformed: ignored
});

test('the live series never holds more than its bound however many values arrive', () => {
  const s = new LiveSeries();
  for (let start = 0; start < 10_000; start += 256) {
    const iterations = Array.from({ length: 256 }, (_, i) => start + i);
    s.add({ id: 1, case: 0, iterations, values: iterations.map((i) => 1000 + i) });
    assert.ok(s.x.length <= MAX_LIVE_POINTS, `${s.x.length} points`);
  }
  assert.equal(s.received, 10_240);
  assert.ok(s.x.length > MAX_LIVE_POINTS / 4);
  for (let i = 1; i < s.x.length; i++) assert.ok(s.x[i] > s.x[i - 1]);
  s.x.forEach((x, i) => assert.equal(s.y[i], 1000 + x));
});

test('counter events are grouped per case, each case once with its parameters', () => {
  const detail = {
    param_names: ['N', 'C'],
    events: [
      { case: 1, id: 7, params: [1, 16], event: 'instructions', pass: 0, n: 5, min: 1, median: 2, max: 3, cv: 0 },
      { case: 0, id: 3, params: [1, 8], event: 'instructions', pass: 0, n: 5, min: 1, median: 2, max: 3, cv: 0 },
      { case: 0, id: 3, params: [1, 8], event: 'loads', pass: 1, n: 5, min: 1, median: 2, max: 3, cv: 0 },
    ],
  };
  const groups = eventsByCase(detail);
  assert.deepEqual(groups.map((g) => [g.case, g.id, g.params, g.rows.map((r) => r.event)]),
      [[0, 3, 'N=1 C=8', ['instructions', 'loads']], [1, 7, 'N=1 C=16', ['instructions']]]);
  assert.deepEqual(eventsByCase({}), []);
});
