// What the compare page concludes from GET /api/v1/compare. Pure.
import { measuredKind } from './format.js';

// A ratio cell: median(job)/median(first job) for latency-like units, so bigger is slower.
//   'regression'  ratio > 1 and the 95% interval excludes 1
//   'improvement' ratio < 1 and the interval excludes 1
//   'unchanged'   the interval includes 1 (and, when the server gives a verdict, lies within 1%)
//   'unclear'     the server's verdict: the interval includes 1 but is wider than 1% either side
//   'unstable'    the server's verdict: either job's timings of the case vary more than the limit
//   'missing'     the case is absent from one of the two jobs
// The server's `verdict` (slower, faster, no change, unclear, unstable) is the one
// `mculab compare` prints.
const SERVER_VERDICTS = { 'slower': 'regression', 'faster': 'improvement', 'no change': 'unchanged',
  'unclear': 'unclear', 'unstable': 'unstable' };
export function classifyRatio(r) {
  if (!r || typeof r.ratio !== 'number') return 'missing';
  if (typeof r.verdict === 'string' && Object.hasOwn(SERVER_VERDICTS, r.verdict)) return SERVER_VERDICTS[r.verdict];
  const excludesOne = r.lo > 1 || r.hi < 1;
  const significant = r.significant === true && excludesOne;
  if (significant && r.ratio > 1) return 'regression';
  if (significant && r.ratio < 1) return 'improvement';
  return 'unchanged';
}

// The words that carry the verdict (colour alone never does).
export const VERDICT_TEXT = {
  regression: '▲ slower (significant)',
  improvement: '▼ faster (significant)',
  unchanged: '≈ no significant change',
  unclear: '? unclear (the 95% interval holds 1 but is wide)',
  unstable: '~ unstable (timings vary too much to judge)',
  missing: 'case missing',
  instructions: 'ratio of instruction counts (no speed verdict)',
};

// Why the ratios stand but carry no faster/slower verdict, or '': emulated jobs in instructions
// from different board kinds (the server says so in `verdict_refused`; the page checks too).
export function verdictRefusal(res) {
  if (res && typeof res.verdict_refused === 'string' && res.verdict_refused) return res.verdict_refused;
  const jobs = (res && res.jobs) || [];
  if (!jobs.length || !jobs.every((j) => j.emulated && j.unit === 'instructions')) return '';
  const kinds = [...new Set(jobs.map((j) => j.kind).filter(Boolean))];
  if (kinds.length < 2) return '';
  return `the jobs ran on different emulated board kinds (${kinds.join(', ')}): emulated figures are ` +
      'instruction counts, so a ratio compares instructions executed, not time';
}

// Warnings for jobs that should not be read side by side without thought.
export function compareWarnings(jobs) {
  const warnings = [];
  const ids = (list) => list.map((j) => `#${j.id}`).join(', ');
  const kinds = ['emulated', 'host', 'silicon'].filter((k) => jobs.some((j) => measuredKind(j) === k));
  if (kinds.length > 1) {
    const where = { emulated: 'on an emulator (instruction counts)', host: 'as a native host process',
      silicon: 'on MCU hardware' };
    warnings.push({
      kind: 'mixed-measurement',
      text: `${kinds.join(' and ').replace(/^./, (c) => c.toUpperCase())} ` +
          'results are mixed: ' +
          kinds.map((k) => `${ids(jobs.filter((j) => measuredKind(j) === k))} ran ${where[k]}`).join(', ') +
          '. Their ratios compare different things.',
    });
  }
  const units = [...new Set(jobs.map((j) => j.unit).filter(Boolean))];
  if (units.length > 1) {
    warnings.push({ kind: 'mixed-units',
      text: `The jobs measure in different units (${units.join(', ')}): ratios between them are not speed-ups.` });
  }
  const ops = [...new Set(jobs.map((j) => j.op).filter(Boolean))];
  if (ops.length > 1) {
    warnings.push({ kind: 'mixed-ops',
      text: `The jobs run different operators (${ops.join(', ')}); cases are matched by id only.` });
  }
  return warnings;
}

// Why no ratio may be shown between these jobs (different units or different kinds: emulated,
// host, silicon), or '' when the ratios stand. The server says so in `ratio_refused`; the page
// checks the jobs itself too, so it never puts a verdict under a warning.
export function ratioRefusal(res) {
  if (res && typeof res.ratio_refused === 'string' && res.ratio_refused) return res.ratio_refused;
  const jobs = (res && res.jobs) || [];
  const units = [...new Set(jobs.map((j) => j.unit).filter(Boolean))];
  if (units.length > 1) {
    return `the jobs are measured in different units (${units.join(', ')}): a ratio of their medians means nothing`;
  }
  const kinds = [...new Set(jobs.map(measuredKind))];
  if (kinds.length > 1) {
    return `the jobs are of different kinds (${kinds.join(', ')}): emulated, host and silicon figures ` +
        'measure different things, so a ratio between them means nothing';
  }
  return '';
}

// Per job column (index >= 1): how many cases got slower, faster, stayed, were missing.
export function verdictCounts(cases, jobIndex) {
  const counts = { regression: 0, improvement: 0, unchanged: 0, unclear: 0, unstable: 0, missing: 0 };
  for (const c of cases) counts[classifyRatio(c.ratios ? c.ratios[jobIndex] : null)] += 1;
  return counts;
}

// One job's side of a case (the server's `variation`): how far its timings can be trusted, as
// words. { text: 'cv 0.4%' | 'cv 12.3% unstable (> 10%)' | 'exact', unstable, notes: [outliers,
// warm-up] }; null when the job lacks the case.
export function variationSummary(v) {
  if (!v || typeof v !== 'object') return null;
  const pct = (x) => `${Number((x * 100).toPrecision(3))}%`;
  const unstable = v.stability === 'unstable';
  let text = v.stability === 'exact' ? 'exact' : `cv ${pct(Number(v.cv) || 0)}`;
  if (unstable && typeof v.max_cv === 'number') text += ` unstable (> ${pct(v.max_cv)})`;
  const notes = [];
  const outliers = Number(v.outliers) || 0;
  if (outliers > 0) {
    const at = Array.isArray(v.outlier_iterations) ? v.outlier_iterations : [];
    notes.push(`${outliers} outlier${outliers === 1 ? '' : 's'} of ${v.n} kept` +
        (at.length ? ` (iteration${at.length === 1 ? '' : 's'} ${at.join(', ')}${outliers > at.length ? ', …' : ''})` : ''));
  }
  const warmup = Number(v.warmup) || 0;
  if (warmup > 0) notes.push(`warm-up: the first ${warmup} iteration${warmup === 1 ? '' : 's'} above the rest`);
  return { text, unstable, notes };
}
