// The operator-benchmark CSV export of a job (DESIGN.md §1, the CLI's `mculab export --csv`):
// "id,<unit>" then "id,median" per case, times in ns exported in us. Pure.
import { formatNumber } from './format.js';

// The unit a result is exported in and the factor from the stored unit (cli ExportUnitFor).
export function exportUnitFor(timerUnit) {
  if (timerUnit === 'ns') return { unit: 'us', divideBy: 1000 };
  if (timerUnit === 'us') return { unit: 'us', divideBy: 1 };
  if (timerUnit === 'ms') return { unit: 'ms', divideBy: 1 };
  if (timerUnit === 'instructions') return { unit: 'instructions', divideBy: 1 };
  return { unit: 'cycles', divideBy: 1 };
}

// detail: the GET /api/v1/jobs/{id} document (the CLI's `show --json`). The unit comes from the provenance's timer unit,
// like the CLI; a job whose provenance has none yet falls back to its cases' unit.
export function buildCsv(detail) {
  const cases = (detail && detail.cases) || [];
  const timerUnit = (detail && detail.provenance && detail.provenance.timer_unit) ||
      (cases.length ? cases[0].unit : '');
  const u = exportUnitFor(timerUnit);
  let out = `id,${u.unit}\n`;
  for (const c of cases) {
    if (c.n === 0) continue;  // a case that has not run has no median
    out += `${c.id},${formatNumber(c.median / u.divideBy)}\n`;
  }
  return out;
}

// The job API object as a downloadable JSON document (what GET /api/v1/jobs/{id} returned).
export function buildJson(detail) {
  return `${JSON.stringify(detail, null, 2)}\n`;
}

export function exportFileName(jobId, extension) {
  const id = Number.isSafeInteger(jobId) && jobId > 0 ? jobId : 'unknown';
  return `mculab-job-${id}.${extension}`;
}
