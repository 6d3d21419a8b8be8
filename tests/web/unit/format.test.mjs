// formatting: numbers exactly as the CLI prints them (C printf), times, durations, counts.
import assert from 'node:assert/strict';
import { test } from 'node:test';

const {
  formatCount, formatDuration, formatNumber, formatPercent, formatProgress, formatRatio, formatRelative,
  formatTime, jobDuration, paramsText, printfFixed, printfGeneral,
} = await import('../../../web/js/format.js');

test('formatNumber prints integers without a fraction', () => {
  assert.equal(formatNumber(1234), '1234');
  assert.equal(formatNumber(0), '0');
  assert.equal(formatNumber(-42), '-42');
  assert.equal(formatNumber(123456789012), '123456789012');
});

test('formatNumber keeps one decimal from 100 up and three from 1 up, trailing zeros cut', () => {
  assert.equal(formatNumber(1234.56), '1234.6');
  assert.equal(formatNumber(66334.5), '66334.5');
  assert.equal(formatNumber(12.3456789), '12.346');
  assert.equal(formatNumber(1.5), '1.5');
  assert.equal(formatNumber(2.1000001), '2.1');
});

test('formatNumber uses three significant digits below 1', () => {
  assert.equal(formatNumber(0.0123456), '0.0123');
  assert.equal(formatNumber(0.5), '0.5');
  assert.equal(formatNumber(0.000012345), '1.23e-05');
});

test('formatNumber gives "-" for missing and non-finite values', () => {
  for (const v of [null, undefined, NaN, Infinity, -Infinity, '12']) assert.equal(formatNumber(v), '-');
});

// Expected strings come from C printf (Python's %-formatting gives the same, correctly rounded).
test('printf emulation rounds exact ties to even like glibc, unlike Number.toFixed', () => {
  assert.equal(printfFixed(100.25, 1), '100.2');
  assert.equal((100.25).toFixed(1), '100.3');  // why printfFixed exists
  assert.equal(printfFixed(2.5, 0), '2');
  assert.equal(printfFixed(1.5, 0), '2');
  assert.equal(printfGeneral(0.5625, 3), '0.562');
  assert.equal(formatNumber(100.25), '100.2');
});

test('printf emulation matches C for assorted values', () => {
  const cases = [
    [printfFixed, 123.456, 1, '123.5'],
    [printfFixed, 1.0005, 3, '1.000'],
    [printfFixed, -0.01, 1, '-0.0'],
    [printfFixed, 1e15 + 0.5, 1, '1000000000000000.5'],
    [printfGeneral, 0.9995, 3, '1'],
    [printfGeneral, 0.0001, 3, '0.0001'],
    [printfGeneral, 0.00012, 3, '0.00012'],
    [printfGeneral, 1e-7, 3, '1e-07'],
    [printfGeneral, 5e-324, 3, '4.94e-324'],
    [printfGeneral, 0.1, 3, '0.1'],
    [printfGeneral, 123456, 3, '1.23e+05'],
  ];
  for (const [f, v, p, want] of cases) assert.equal(f(v, p), want, `${f.name}(${v}, ${p})`);
});

test('formatCount groups thousands', () => {
  assert.equal(formatCount(100000), '100,000');
  assert.equal(formatCount(999), '999');
  assert.equal(formatCount(1234567), '1,234,567');
  assert.equal(formatCount(-1234), '-1,234');
  assert.equal(formatCount(null), '-');
});

test('formatPercent shows cv as a percentage like the CLI', () => {
  assert.equal(formatPercent(0.0123), '1.23%');
  assert.equal(formatPercent(0), '0%');
  assert.equal(formatPercent(undefined), '-');
});

test('formatTime prints UTC date and time, labelled, "-" for a time not reached yet', () => {
  assert.equal(formatTime(Date.UTC(2025, 10, 3, 9, 5, 7)), '2025-11-03 09:05:07 UTC');
  assert.equal(formatTime(0), '-');
  assert.equal(formatTime(-5), '-');
});

test('formatTime does not depend on the browser\'s zone', () => {
  const saved = process.env.TZ;
  process.env.TZ = 'Asia/Kolkata';  // UTC+5:30: local time would read 14:35:07
  try {
    assert.equal(new Date(Date.UTC(2025, 10, 3, 9, 5, 7)).getHours(), 14);  // the zone took
    assert.equal(formatTime(Date.UTC(2025, 10, 3, 9, 5, 7)), '2025-11-03 09:05:07 UTC');
  } finally {
    if (saved === undefined) delete process.env.TZ;
    else process.env.TZ = saved;
  }
});

test('formatDuration picks a readable unit', () => {
  assert.equal(formatDuration(850), '850 ms');
  assert.equal(formatDuration(12_340), '12.3 s');
  assert.equal(formatDuration(245_000), '4 min 05 s');
  assert.equal(formatDuration(7_380_000), '2 h 03 min');
  assert.equal(formatDuration(3 * 86_400_000 + 4 * 3_600_000), '3 d 4 h');
  assert.equal(formatDuration(-1), '-');
});

test('formatRelative says "in" for the future and "ago" for the past', () => {
  const now = 1_000_000_000_000;
  assert.equal(formatRelative(now + 47 * 60_000, now), 'in 47 min');
  assert.equal(formatRelative(now - 30_000, now), '30 s ago');
  assert.equal(formatRelative(0, now), '-');
});

test('jobDuration runs to now while a job is still running', () => {
  assert.equal(jobDuration({ started_ms: 1000, finished_ms: 46_000 }, 99_999), '45 s');
  assert.equal(jobDuration({ started_ms: 1000, finished_ms: 0 }, 11_000), '10 s');
  assert.equal(jobDuration({ started_ms: 0, finished_ms: 0 }, 11_000), '-');
});

test('paramsText names each parameter when names are known', () => {
  assert.equal(paramsText(['N', 'C'], [1, 8]), 'N=1 C=8');
  assert.equal(paramsText(['N'], [1, 8]), 'N=1 8');
  assert.equal(paramsText(undefined, [1, 8]), '1 8');
  assert.equal(paramsText(['N'], undefined), '');
});

test('formatRatio shows the ratio with its interval', () => {
  assert.equal(formatRatio({ ratio: 1.1, lo: 1.08, hi: 1.1234 }), '1.100 [1.080, 1.123]');
  assert.equal(formatRatio(null), '-');
});

test('formatProgress shows done, total and whole percent', () => {
  assert.equal(formatProgress(60, 120), '60 / 120 (50%)');
  assert.equal(formatProgress(1, 3), '1 / 3 (33%)');
  assert.equal(formatProgress(0, 0), '-');
});
