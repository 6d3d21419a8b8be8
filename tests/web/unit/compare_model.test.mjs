// What the compare page concludes from ratios and job flags.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { VERDICT_TEXT, classifyRatio, compareWarnings, variationSummary, verdictCounts } from '../../../web/js/compare_model.js';

test('a significant ratio above 1 is a regression, below 1 an improvement', () => {
  assert.equal(classifyRatio({ ratio: 1.1, lo: 1.08, hi: 1.12, significant: true }), 'regression');
  assert.equal(classifyRatio({ ratio: 0.8, lo: 0.79, hi: 0.81, significant: true }), 'improvement');
});

test('an interval that includes 1 is no significant change, whatever the flag says', () => {
  assert.equal(classifyRatio({ ratio: 1.02, lo: 0.99, hi: 1.05, significant: false }), 'unchanged');
  assert.equal(classifyRatio({ ratio: 1.02, lo: 0.99, hi: 1.05, significant: true }), 'unchanged');
  assert.equal(classifyRatio({ ratio: 1, lo: 1, hi: 1, significant: false }), 'unchanged');
});

test('the server\'s verdict wins: slower, faster, no change, unclear', () => {
  assert.equal(classifyRatio({ ratio: 1.05, lo: 0.9, hi: 1.2, significant: false, verdict: 'unclear' }), 'unclear');
  assert.equal(classifyRatio({ ratio: 1.001, lo: 0.998, hi: 1.004, significant: false, verdict: 'no change' }), 'unchanged');
  assert.equal(classifyRatio({ ratio: 1.1, lo: 1.08, hi: 1.12, significant: true, verdict: 'slower' }), 'regression');
  assert.equal(classifyRatio({ ratio: 0.8, lo: 0.79, hi: 0.81, significant: true, verdict: 'faster' }), 'improvement');
  assert.match(VERDICT_TEXT.unclear, /unclear/);
});

test('a case missing from a job is reported as missing', () => {
  assert.equal(classifyRatio(null), 'missing');
  assert.equal(classifyRatio(undefined), 'missing');
});

test('every verdict has words, not only a colour', () => {
  for (const v of ['regression', 'improvement', 'unchanged', 'missing']) assert.ok(VERDICT_TEXT[v].length > 3);
  assert.match(VERDICT_TEXT.regression, /slower/);
  assert.match(VERDICT_TEXT.improvement, /faster/);
});

test('mixing emulated and silicon jobs is warned about, naming the jobs', () => {
  const w = compareWarnings([{ id: 1, emulated: true, unit: 'cycles', op: 'conv2d_s8' },
    { id: 2, emulated: false, unit: 'cycles', op: 'conv2d_s8' }]);
  assert.deepEqual(w.map((x) => x.kind), ['mixed-measurement']);
  assert.match(w[0].text, /#1.*emulator.*#2.*hardware/);
});

test('jobs of one kind raise no warning; different units and ops do', () => {
  assert.deepEqual(compareWarnings([{ id: 1, emulated: true, unit: 'cycles', op: 'a' }, { id: 2, emulated: true, unit: 'cycles', op: 'a' }]), []);
  const w = compareWarnings([{ id: 1, emulated: false, unit: 'ns', op: 'a' }, { id: 2, emulated: false, unit: 'cycles', op: 'b' }]);
  assert.deepEqual(w.map((x) => x.kind), ['mixed-units', 'mixed-ops']);
});

test('verdicts are counted per compared job', () => {
  const cases = [
    { ratios: [null, { ratio: 1.2, lo: 1.1, hi: 1.3, significant: true }, { ratio: 1, lo: 0.9, hi: 1.1, significant: false }] },
    { ratios: [null, { ratio: 0.5, lo: 0.4, hi: 0.6, significant: true }, null] },
  ];
  assert.deepEqual(verdictCounts(cases, 1), { regression: 1, improvement: 1, unchanged: 0, unclear: 0, unstable: 0, missing: 0 });
  assert.deepEqual(verdictCounts(cases, 2), { regression: 0, improvement: 0, unchanged: 1, unclear: 0, unstable: 0, missing: 1 });
});

test('no ratio between jobs of different kinds or units; the server\'s reason wins', async () => {
  const { ratioRefusal } = await import('../../../web/js/compare_model.js');
  assert.equal(ratioRefusal({ jobs: [{ unit: 'ns', measured: 'host' }, { unit: 'ns', measured: 'host' }] }), '');
  assert.match(ratioRefusal({ jobs: [{ unit: 'cycles', emulated: true }, { unit: 'cycles', measured: 'silicon' }] }),
      /different kinds \(emulated, silicon\)/);
  assert.match(ratioRefusal({ jobs: [{ unit: 'ns', measured: 'host' }, { unit: 'cycles', measured: 'host' }] }),
      /different units \(ns, cycles\)/);
  assert.equal(ratioRefusal({ ratio_refused: 'because', jobs: [] }), 'because');
});

test('host, emulated and silicon jobs mixed are named in one warning', () => {
  const w = compareWarnings([{ id: 1, measured: 'host', unit: 'ns', op: 'a' },
    { id: 2, emulated: true, unit: 'ns', op: 'a' }]);
  assert.equal(w.length, 1);
  assert.match(w[0].text, /^Emulated and host results are mixed: #2 ran on an emulator.*#1 ran as a native host process/);
});

test('emulated jobs in instructions on different board kinds get ratios but no speed verdict', async () => {
  const { verdictRefusal } = await import('../../../web/js/compare_model.js');
  const m55 = { emulated: true, unit: 'instructions', kind: 'corstone300-qemu' };
  const m7 = { emulated: true, unit: 'instructions', kind: 'an500-qemu' };
  assert.match(verdictRefusal({ jobs: [m55, m7] }), /different emulated board kinds \(corstone300-qemu, an500-qemu\)/);
  assert.equal(verdictRefusal({ jobs: [m55, { ...m55 }] }), '', 'the same kind: instruction counts compare');
  assert.equal(verdictRefusal({ jobs: [{ ...m55, unit: 'cycles', emulated: false }, m7] }), '');
  assert.equal(verdictRefusal({ verdict_refused: 'server says', jobs: [] }), 'server says');
  assert.ok(VERDICT_TEXT.instructions.includes('no speed verdict'));
  assert.ok(!/faster|slower/.test(VERDICT_TEXT.instructions));
});

test('an unstable case is never slower or faster: the server says unstable and the page says why', () => {
  // A significant ratio whose sides vary beyond the limit: the server's verdict is "unstable".
  assert.equal(classifyRatio({ ratio: 1.4, lo: 1.2, hi: 1.6, significant: true, verdict: 'unstable' }), 'unstable');
  assert.match(VERDICT_TEXT.unstable, /unstable/);
  assert.doesNotMatch(VERDICT_TEXT.unstable, /slower|faster/);
  const counts = verdictCounts([{ ratios: [null, { ratio: 1.4, lo: 1.2, hi: 1.6, significant: true, verdict: 'unstable' }] }], 1);
  assert.equal(counts.unstable, 1);
  assert.equal(counts.regression, 0);
});

test('a variation in words: exact, cv, unstable with its limit, outliers kept and warm-up', () => {
  assert.equal(variationSummary(null), null);
  assert.deepEqual(variationSummary({ stability: 'exact', cv: 0, max_cv: null, n: 20, outliers: 0, warmup: 0 }),
      { text: 'exact', unstable: false, notes: [] });
  assert.equal(variationSummary({ stability: 'steady', cv: 0.004, max_cv: 0.1, n: 20 }).text, 'cv 0.4%');
  const noisy = variationSummary({ stability: 'unstable', cv: 0.63, max_cv: 0.1, n: 20, outliers: 1,
    high_outliers: 1, low_outliers: 0, outlier_iterations: [0], warmup: 1 });
  assert.equal(noisy.text, 'cv 63% unstable (> 10%)');
  assert.equal(noisy.unstable, true);
  assert.deepEqual(noisy.notes, ['1 outlier of 20 kept (iteration 0)', 'warm-up: the first 1 iteration above the rest']);
  const many = variationSummary({ stability: 'steady', cv: 0.01, max_cv: 0.02, n: 100, outliers: 10,
    outlier_iterations: [1, 2, 3, 4, 5, 6, 7, 8], warmup: 0 });
  assert.equal(many.notes[0], '10 outliers of 100 kept (iterations 1, 2, 3, 4, 5, 6, 7, 8, …)');
});
