// The per-layer bars of a job page and the per-layer compare of two jobs (layers.js holds the
// arithmetic). Bars are drawn with the CSSOM (width), never inline style attributes; every bar
// carries its figure as text, so nothing is read from colour or length alone.
import { apiGet } from './api.js';
import { h, replaceChildren, scrollTable } from './dom.js';
import { formatCount, formatNumber } from './format.js';
import { commonMetrics, compareLayers, layerMetrics, layerRows } from './layers.js';

// Counts per inference with thousands separators (a mean over calls may have a fraction);
// shares to 0.1 %.
const count = (v) => (Number.isInteger(v) ? formatCount(v) : formatNumber(v));
const share = (f) => `${(Math.round(f * 1000) / 10).toFixed(1)} %`;

function bar(fraction, kind) {
  const fill = h('span', { class: ['layer-bar-fill', kind] });
  fill.style.width = `${Math.max(0, Math.min(1, fraction)) * 100}%`;
  return h('span', { class: 'layer-bar', 'aria-hidden': 'true' }, fill);
}

function layerLabel(r) {
  return h('span', { class: 'layer-label' }, h('span', { class: 'layer-index' }, `#${r.op_index}`), ' ',
      h('span', { class: 'layer-type' }, r.type), ' ', h('span', { class: 'layer-name' }, r.name));
}

function metricSelect(id, metrics, onChange) {
  const select = h('select', { id, name: 'metric' }, metrics.map((m) => h('option', { value: m }, m)));
  select.addEventListener('change', () => onChange(select.value));
  return h('label', { class: 'layer-metric', for: id }, 'event ', select);
}

// The job page's section: one bar per layer, its share of the inference for the chosen event
// (cycles first), the mean per inference beside it. null when the profile is not per layer.
export function layerBarsSection(ops) {
  const metrics = layerMetrics(ops);
  if (metrics.length === 0) return null;
  const list = h('ol', { class: 'layer-bars', id: 'layer-bars' });
  const draw = (metric) => {
    const rows = layerRows(ops, metric);
    const most = Math.max(...rows.map((r) => r.share), 0);
    replaceChildren(list, ...rows.map((r) => h('li', { class: 'layer-row', dataset: { op: String(r.op_index) } },
        layerLabel(r), bar(most > 0 ? r.share / most : 0, 'one'),
        h('span', { class: 'layer-figure' }, `${share(r.share)} · ${count(r.mean)} ${metric}`))));
  };
  draw(metrics[0]);
  return h('section', { id: 'layers', class: 'card' }, h('h2', {}, 'Per-layer profile'),
      h('p', { class: 'table-note' }, 'Each layer’s share of one inference and its count per inference; ' +
          'bars are scaled to the largest layer.'),
      metricSelect('layer-metric', metrics, draw), list);
}

// The compare page's section for two jobs with per-layer profiles: per layer, both jobs' counts
// per inference, their ratio (second / first) and mirrored share bars.
export function layerCompareSection(jobA, opsA, jobB, opsB) {
  const metrics = commonMetrics(opsA, opsB);
  if (metrics.length === 0) return null;
  const holder = h('div', { id: 'layer-compare-table' });
  const note = h('p', { class: 'table-note', id: 'layer-compare-note' });
  const draw = (metric) => {
    const rows = compareLayers(opsA, opsB, metric);
    const differ = rows.filter((r) => !r.sameType).length;
    note.textContent = differ > 0
      ? `${differ} layer(s) differ in type between #${jobA.id} and #${jobB.id}: not the same model, ` +
        'rows at those indices compare different operators.'
      : `Ratio = #${jobB.id} / #${jobA.id} of the ${metric} per inference; bars: each layer’s share.`;
    const table = h('table', { class: 'data layer-compare', id: 'layer-compare' },
        h('thead', {}, h('tr', {}, ['layer', `#${jobA.id}`, `#${jobB.id}`, 'ratio']
            .map((t) => h('th', { scope: 'col' }, t)))),
        h('tbody', {}, rows.map((r) => h('tr', { class: r.sameType ? null : 'layer-mismatch' },
            h('td', {}, layerLabel(r)),
            h('td', { class: 'num' }, r.a ? [bar(r.a.share, 'a'), ` ${count(r.a.mean)} (${share(r.a.share)})`] : '-'),
            h('td', { class: 'num' }, r.b ? [bar(r.b.share, 'b'), ` ${count(r.b.mean)} (${share(r.b.share)})`] : '-'),
            h('td', { class: 'num' }, r.ratio === null ? '-' : `${formatNumber(Math.round(r.ratio * 1000) / 1000)}×`)))));
    replaceChildren(holder, scrollTable(table, 'per-layer comparison'));
  };
  draw(metrics[0]);
  return h('section', { id: 'layers-compare', class: 'card' },
      h('h2', {}, `Per layer: #${jobA.id} vs #${jobB.id}`),
      metricSelect('layer-compare-metric', metrics, draw), note, holder);
}

// The compare page: when both jobs have per-layer profiles, their section after the cases.
export async function appendLayerCompare(container, jobA, jobB) {
  let a;
  let b;
  try {
    [a, b] = await Promise.all([apiGet(`jobs/${jobA.id}`), apiGet(`jobs/${jobB.id}`)]);
  } catch {
    return;  // the cases above still stand; the page's other requests report the error
  }
  document.getElementById('layers-compare')?.remove();
  const section = layerCompareSection(jobA, a.ops, jobB, b.ops);
  if (section) container.append(section);
}
