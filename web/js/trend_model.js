// The trend view's pure parts: which series a page address names, the API parameters for it,
// the link to a job case's series, and what the plot draws (median, interval band, runner
// changes, change points) from GET /api/v1/series. No DOM here: unit-tested under node.

// Query parameters of trend.html and GET /api/v1/series, in the order the page writes them.
export const TREND_PARAMS = ['kind', 'op', 'params', 'case', 'runner', 'model', 'user', 'label', 'tag', 'limit', 'window', 'min_step'];

// trend.html?kind=...&op=...&params=... -> {kind, op, params, case, ...}: the given, non-empty ones.
export function parseTrendQuery(search) {
  const q = new URLSearchParams(search);
  const out = {};
  for (const name of TREND_PARAMS) {
    const v = (q.get(name) || '').trim();
    if (v !== '') out[name] = v;
  }
  return out;
}

// What the page needs before it can ask: a kind, an op and the case (its parameters or its id).
// null when complete, else the words saying what is missing.
export function missingForTrend(query) {
  const missing = [];
  if (!query.kind) missing.push('a board kind');
  if (!query.op) missing.push('an op');
  if (!query.params && !query.case) missing.push("the case's parameters (or its id)");
  if (query.op === 'model' && !query.model) missing.push("the model's file name");
  if (query.op === 'custom' && !query.runner) missing.push("the runner's file name");
  return missing.length ? `Name ${missing.join(', ')}.` : null;
}

// The page address (and API query string) of a series: "kind=host&op=...&params=1,8,4".
export function trendQueryString(query) {
  const q = new URLSearchParams();
  for (const name of TREND_PARAMS) if (query[name] !== undefined && query[name] !== '') q.set(name, String(query[name]));
  return q.toString();
}

// The series of one case of a job (the job page's "trend" links): its op's parameters when it
// has them, else its case id (custom runners), on the job's board kind.
export function trendHref(job, c) {
  const query = { kind: job.kind, op: job.op };
  if (Array.isArray(c.params) && c.params.length > 0) query.params = c.params.join(',');
  else query.case = String(c.id);
  // A model job's series is its model's, a custom runner's its runner's (the server refuses a
  // series of either without it).
  if (job.model_name) query.model = job.model_name;
  if (job.op === 'custom' && job.runner_name) query.runner = job.runner_name;
  return `trend.html?${trendQueryString(query)}`;
}

// The compare page for the two jobs either side of a change point.
export function compareHref(change) {
  return `compare.html?jobs=${change.before_job},${change.after_job}`;
}

// uPlot's data: x is the job's position (oldest first), then median, interval low and high.
export function plotData(series) {
  const jobs = series.jobs || [];
  return [
    jobs.map((_, i) => i),
    jobs.map((j) => j.median),
    jobs.map((j) => j.lo),
    jobs.map((j) => j.hi),
  ];
}

// Positions where the runner (firmware hash or version) differs from the job before's.
export function runnerChangeIndexes(series) {
  return (series.jobs || []).flatMap((j, i) => (j.runner_changed ? [i] : []));
}

// Where each change point lies on the x axis: half way between the last job of the old level
// and the first of the new one.
export function changeMarkX(change) {
  return change.index - 0.5;
}

// "+20.0 %" / "−5.3 %" for a change point's ratio; "slower" above 1.
export function stepText(change) {
  const pct = (change.ratio - 1) * 100;
  const sign = pct >= 0 ? '+' : '−';
  return `${sign}${Math.abs(pct).toFixed(1)} % (${change.ratio > 1 ? 'slower' : 'faster'})`;
}

// The change point a job starts, by job id.
export function changesByAfterJob(series) {
  const out = new Map();
  for (const c of series.changes || []) out.set(c.after_job, c);
  return out;
}

// Short hash for a table cell: the first 8 hex digits, or "-".
export function shortHash(sha) {
  return sha ? String(sha).slice(0, 8) : '-';
}

// A job's tick under the trend chart: '#ID', or with by === 'commit' its commit's first 7 digits
// (a job submitted without a commit keeps '#ID').
export function xTickLabel(job, by) {
  if (!job) return '';
  if (by === 'commit' && typeof job.commit === 'string' && job.commit) return job.commit.slice(0, 7);
  return `#${job.id}`;
}
