// Equal-width histogram of a case's per-iteration values. Pure.
//
// Bins: sqrt(n), between 5 and maxBins, over [min, max]. All-equal values (an emulated board
// gives identical counts every time) make one bin of width 1 centred on the value.
export function histogramBins(values, maxBins = 40) {
  const finite = values.filter((v) => Number.isFinite(v));
  if (finite.length === 0) return { centers: [], counts: [], edges: [], width: 0 };
  let min = Infinity;
  let max = -Infinity;
  for (const v of finite) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  if (min === max) return { centers: [min], counts: [finite.length], edges: [min - 0.5, min + 0.5], width: 1 };
  const bins = Math.max(5, Math.min(maxBins, Math.ceil(Math.sqrt(finite.length))));
  const width = (max - min) / bins;
  const counts = new Array(bins).fill(0);
  for (const v of finite) counts[Math.min(bins - 1, Math.floor((v - min) / width))] += 1;
  const edges = Array.from({ length: bins + 1 }, (_, i) => min + i * width);
  edges[bins] = max;
  const centers = counts.map((_, i) => min + (i + 0.5) * width);
  return { centers, counts, edges, width };
}

// The server's histogram (GET .../samples?bins=N: {lo, hi, counts}) in the same shape.
export function histogramFromServer(hist) {
  const n = hist.counts.length;
  if (n === 0) return { centers: [], counts: [], edges: [], width: 0 };
  if (hist.hi === hist.lo) {
    return { centers: [hist.lo], counts: [hist.counts.reduce((a, b) => a + b, 0)],
      edges: [hist.lo - 0.5, hist.lo + 0.5], width: 1 };
  }
  const width = (hist.hi - hist.lo) / n;
  return {
    centers: hist.counts.map((_, i) => hist.lo + (i + 0.5) * width),
    counts: hist.counts.slice(),
    edges: Array.from({ length: n + 1 }, (_, i) => (i === n ? hist.hi : hist.lo + i * width)),
    width,
  };
}
