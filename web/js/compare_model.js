// What the compare page concludes from GET /api/v1/compare. Pure.

// A ratio cell: median(job)/median(first job) for latency-like units, so bigger is slower.
//   'regression'  ratio > 1 and the 95% interval excludes 1
//   'improvement' ratio < 1 and the interval excludes 1
//   'unchanged'   the interval includes 1
//   'missing'     the case is absent from one of the two jobs
export function classifyRatio(r) {
  if (!r || typeof r.ratio !== 'number') return 'missing';
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
  missing: 'case missing',
};

// Warnings for jobs that should not be read side by side without thought.
export function compareWarnings(jobs) {
  const warnings = [];
  const emulated = jobs.filter((j) => j.emulated);
  if (emulated.length > 0 && emulated.length < jobs.length) {
    const ids = (list) => list.map((j) => `#${j.id}`).join(', ');
    warnings.push({
      kind: 'mixed-measurement',
      text: `Emulated and silicon results are mixed: ${ids(emulated)} ran on an emulator ` +
          `(instruction counts), ${ids(jobs.filter((j) => !j.emulated))} on hardware. ` +
          'Their ratios compare different things.',
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

// Per job column (index >= 1): how many cases got slower, faster, stayed, were missing.
export function verdictCounts(cases, jobIndex) {
  const counts = { regression: 0, improvement: 0, unchanged: 0, missing: 0 };
  for (const c of cases) counts[classifyRatio(c.ratios ? c.ratios[jobIndex] : null)] += 1;
  return counts;
}
