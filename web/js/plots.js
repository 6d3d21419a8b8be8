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

// Tick labels: "75k", "1.25M" beyond 10,000 (so they fit under a narrow plot), with as many
// decimals as it takes to show each tick exactly (and so keep neighbouring ticks apart).
export function compactLabels(splits) {
  const vals = splits.filter((v) => v !== null && v !== undefined);
  const top = Math.max(0, ...vals.map((v) => Math.abs(v)));
  const [div, suffix] = top >= 1e10 ? [1e9, 'G'] : top >= 1e7 ? [1e6, 'M'] : top >= 1e4 ? [1e3, 'k'] : [1, ''];
  for (let decimals = 0; decimals <= 6; decimals++) {
    const labels = splits.map((v) => (v === null || v === undefined ? '' : v === 0 ? '0'
      : `${(v / div).toFixed(decimals).replace(/\.0+$|(\.\d*?)0+$/, '$1')}${suffix}`));
    const exact = splits.every((v, i) => v === null || v === undefined || v === 0 ||
        Math.abs(parseFloat(labels[i]) * div - v) <= 1e-9 * Math.abs(v));
    if (exact && new Set(labels.filter(Boolean)).size === vals.length) return labels;
  }
  return splits.map((v) => (v === null || v === undefined ? '' : String(v)));
}
function compactValues(u, splits) {
  return compactLabels(splits);
}

// The y axis as wide as its longest tick label plus the rotated axis label, so they never overlap.
function yAxisSize(u, values) {
  const longest = Math.max(3, ...(values || []).map((v) => String(v).length));
  return Math.ceil(longest * 7.5) + 34;
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
    legend: { show: false },  // an empty legend ("iteration: --") says nothing; axes are labelled
    cursor: { drag: { x: true, y: false } },
    series: [
      { label: 'iteration' },
      { label: unit, stroke, width: 1.5, points: { show: x.length <= 200, size: 4, fill: stroke } },
    ],
    axes: [
      { ...axisStyle(), label: 'iteration', space: 60 },
      { ...axisStyle(), label: unit, values: compactValues, size: yAxisSize, gap: 6 },
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
    legend: { show: false },
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
      { ...axisStyle(), label: unit, values: compactValues, space: 70 },
      // Counts: whole-number ticks only.
      { ...axisStyle(), label: 'iterations', values: compactValues, size: yAxisSize, gap: 6,
        incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6] },
    ],
  };
  const u = new uPlot(opts, [hist.centers, hist.counts], container);
  return followWidth(u, container);
}
