// uPlot charts for the job page: per-iteration line and histogram bars. uPlot is loaded on
// demand from vendor/ (copied there by `npm ci`), so the pages without plots never load it and a
// missing copy is reported instead of breaking the page.
let uPlotPromise = null;

export function loadUPlot() {
  if (!uPlotPromise) {
    uPlotPromise = import('../vendor/uPlot.esm.js').then((m) => m.default).catch((e) => {
      uPlotPromise = null;
      throw new Error(`the plotting library (vendor/uPlot.esm.js) did not load: run "npm ci" in web/ (${e.message})`);
    });
  }
  return uPlotPromise;
}

function cssVar(name, fallback) {
  const v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return v || fallback;
}

function axisStyle() {
  const text = cssVar('--text-muted', '#555');
  const grid = cssVar('--grid', '#ddd');
  return { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
}

function chartHeight(container) {
  return container.clientWidth < 500 ? 200 : 260;
}

// Keeps the chart as wide as its container.
function followWidth(u, container) {
  const ro = new ResizeObserver(() => {
    const w = container.clientWidth;
    if (w > 0 && Math.abs(w - u.width) > 1) u.setSize({ width: w, height: chartHeight(container) });
  });
  ro.observe(container);
  return () => { ro.disconnect(); u.destroy(); };
}

// x: iteration numbers (ascending), y: values. Returns a destroy() function.
export async function drawLineChart(container, { x, y, unit }) {
  const uPlot = await loadUPlot();
  const stroke = cssVar('--plot-line', '#1f5fbf');
  const opts = {
    width: Math.max(container.clientWidth, 200),
    height: chartHeight(container),
    scales: { x: { time: false } },
    legend: { show: true },
    cursor: { drag: { x: true, y: false } },
    series: [
      { label: 'iteration' },
      { label: unit, stroke, width: 1.5, points: { show: x.length <= 200, size: 4, fill: stroke } },
    ],
    axes: [
      { ...axisStyle(), label: 'iteration' },
      { ...axisStyle(), label: unit, size: 70 },
    ],
  };
  const u = new uPlot(opts, [x, y], container);
  return followWidth(u, container);
}

// hist: {centers, counts, width} (histogram.js). Returns a destroy() function.
export async function drawHistogram(container, hist, { unit }) {
  const uPlot = await loadUPlot();
  const fill = cssVar('--plot-bar', '#6b8fd6');
  const stroke = cssVar('--plot-line', '#1f5fbf');
  const single = hist.centers.length === 1;
  // One bin (identical values): a window of about ±0.5% around the value, so ticks stay round.
  const pad = single ? 5 * 10 ** Math.max(0, Math.floor(Math.log10(Math.abs(hist.centers[0]) || 1)) - 3) : hist.width * 0.5;
  const half = single ? 0 : hist.width / 2;
  const lo = hist.centers[0] - half;
  const hi = hist.centers[hist.centers.length - 1] + half;
  const opts = {
    width: Math.max(container.clientWidth, 200),
    height: chartHeight(container),
    scales: {
      x: { time: false, range: () => [lo - pad, hi + pad] },
      y: { range: (u, min, max) => [0, Math.max(1, max) * 1.1] },
    },
    legend: { show: true },
    cursor: { drag: { x: false, y: false } },
    series: [
      { label: unit },
      {
        label: 'iterations',
        fill,
        stroke,
        width: 1,
        paths: uPlot.paths.bars({ size: [single ? 0.15 : 0.95, Infinity], align: 0 }),
        points: { show: false },
      },
    ],
    axes: [
      { ...axisStyle(), label: unit },
      { ...axisStyle(), label: 'iterations', size: 60 },
    ],
  };
  const u = new uPlot(opts, [hist.centers, hist.counts], container);
  return followWidth(u, container);
}
