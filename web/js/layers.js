// The per-layer view of a job's per-operator profile (GET /api/v1/jobs/{id} "ops": one row per
// case, operator and metric: {case, op_index, type, name, metric, count, sum, mean, min, max,
// share}), e.g. a .tflite model's layers. Pure: the job page's bars and the compare page's
// per-layer table (layer_view.js) are drawn from these.

// Whether the rows are per-layer rows of that shape (older profiles have other columns).
export function isLayerProfile(ops) {
  return Array.isArray(ops) && ops.length > 0 &&
      ops.every((r) => r && Number.isInteger(r.op_index) && typeof r.metric === 'string');
}

// The metrics the profile counted, the timer first, then in their first appearance order.
export function layerMetrics(ops) {
  if (!isLayerProfile(ops)) return [];
  const out = [];
  for (const r of ops) if (!out.includes(r.metric)) out.push(r.metric);
  // An emulated board's timer is 'instructions', which is also an event's name: a timer unit of
  // silicon or the host wins when both are there.
  const timer = ['cycles', 'ns', 'us', 'instructions'].find((m) => out.includes(m));
  return timer ? [timer, ...out.filter((m) => m !== timer)] : out;
}

// One metric's layers of the first case (a model job has one), in graph order: share of the
// inference (0..1), mean per call (per inference), calls.
export function layerRows(ops, metric) {
  if (!isLayerProfile(ops)) return [];
  const firstCase = Math.min(...ops.map((r) => r.case ?? 0));
  return ops.filter((r) => r.metric === metric && (r.case ?? 0) === firstCase)
      .map((r) => ({ op_index: r.op_index, type: String(r.type ?? ''), name: String(r.name ?? ''),
        share: Number(r.share) || 0, mean: Number(r.mean) || 0, count: Number(r.count) || 0 }))
      .sort((a, b) => a.op_index - b.op_index);
}

// Two jobs' layers side by side for one metric, matched by operator index: ratio = b / a of the
// mean per inference (null where one side lacks the layer or a is 0); `sameType` false where the
// two graphs differ at that index (different models: the rows are not comparable).
export function compareLayers(opsA, opsB, metric) {
  const a = new Map(layerRows(opsA, metric).map((r) => [r.op_index, r]));
  const b = new Map(layerRows(opsB, metric).map((r) => [r.op_index, r]));
  const indices = [...new Set([...a.keys(), ...b.keys()])].sort((x, y) => x - y);
  return indices.map((i) => {
    const ra = a.get(i) || null;
    const rb = b.get(i) || null;
    const ratio = ra && rb && ra.mean > 0 ? rb.mean / ra.mean : null;
    return { op_index: i, type: (ra || rb).type, name: (ra || rb).name, a: ra, b: rb, ratio,
      sameType: !!(ra && rb && ra.type === rb.type) };
  });
}

// The metrics both jobs counted, in the first job's order.
export function commonMetrics(opsA, opsB) {
  const b = layerMetrics(opsB);
  return layerMetrics(opsA).filter((m) => b.includes(m));
}
