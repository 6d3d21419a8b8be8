// The trend page's chart: a case's median job after job with its 95% interval as a band, a dashed
// line where the runner changed and a solid one at each change point (uPlot, loaded on demand).
import { compactLabels, loadUPlot } from './plots.js';
import { changeMarkX, plotData, runnerChangeIndexes, xTickLabel } from './trend_model.js';

function cssVar(name, fallback) {
  const v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return v || fallback;
}

function chartHeight(container) {
  return container.clientWidth < 500 ? 220 : 300;
}

// Vertical lines at the given x values, drawn over the plot area.
function drawVerticals(u, xs, color, width, dash) {
  const ctx = u.ctx;
  const { top, height } = u.bbox;
  ctx.save();
  ctx.strokeStyle = color;
  ctx.lineWidth = width * devicePixelRatio;
  ctx.setLineDash(dash.map((d) => d * devicePixelRatio));
  for (const x of xs) {
    const px = Math.round(u.valToPos(x, 'x', true));
    ctx.beginPath();
    ctx.moveTo(px, top);
    ctx.lineTo(px, top + height);
    ctx.stroke();
  }
  ctx.restore();
}

// series: the GET /api/v1/series document. Returns a destroy() function.
// by: 'job' (the default) or 'commit': what the x-axis ticks name (xTickLabel).
export async function drawTrendChart(container, series, by = 'job') {
  const uPlot = await loadUPlot();
  const jobs = series.jobs || [];
  const line = cssVar('--plot-line', '#1f5fbf');
  const band = cssVar('--plot-bar', '#7fa3e0');
  const runner = cssVar('--warn', '#8a5a00');
  const change = cssVar('--bad', '#b3261e');
  const unit = series.unit || '';
  const runnerXs = runnerChangeIndexes(series).map((i) => i - 0.5);
  const changeXs = (series.changes || []).map(changeMarkX);
  const last = Math.max(0, jobs.length - 1);
  const opts = {
    width: Math.max(container.clientWidth, 200),
    height: chartHeight(container),
    scales: { x: { time: false, range: () => [-0.5, last + 0.5] } },
    legend: { show: false },  // the key under the chart names the lines; the table has the values
    cursor: { drag: { x: true, y: false } },
    bands: [{ series: [3, 2], fill: `${band}73` }],
    series: [
      { label: 'job' },
      { label: 'median', stroke: line, width: 2, points: { show: jobs.length <= 120, size: 5, fill: line } },
      { label: '95% low', stroke: band, width: 1, points: { show: false } },
      { label: '95% high', stroke: band, width: 1, points: { show: false } },
    ],
    axes: [
      {
        stroke: cssVar('--text-muted', '#555'),
        grid: { show: false },
        ticks: { stroke: cssVar('--grid', '#ddd'), width: 1 },
        label: by === 'commit' ? 'commit (oldest job to newest)' : 'job (oldest to newest)',
        space: 56,
        incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500],
        values: (u, splits) => splits.map((v) => (Number.isInteger(v) && jobs[v] ? xTickLabel(jobs[v], by) : '')),
      },
      {
        stroke: cssVar('--text-muted', '#555'),
        grid: { stroke: cssVar('--grid', '#ddd'), width: 1 },
        ticks: { stroke: cssVar('--grid', '#ddd'), width: 1 },
        label: unit,
        values: (u, splits) => compactLabels(splits),
        size: (u, values) => Math.ceil(Math.max(3, ...(values || []).map((v) => String(v).length)) * 7.5) + 34,
        gap: 6,
      },
    ],
    hooks: {
      draw: [(u) => {
        drawVerticals(u, runnerXs, runner, 1.5, [5, 4]);
        drawVerticals(u, changeXs, change, 2.5, []);
      }],
    },
  };
  const u = new uPlot(opts, plotData(series), container);
  const ro = new ResizeObserver(() => {
    const w = container.clientWidth;
    if (w > 0 && Math.abs(w - u.width) > 1) u.setSize({ width: w, height: chartHeight(container) });
  });
  ro.observe(container);
  return () => { ro.disconnect(); u.destroy(); };
}
