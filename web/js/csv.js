// A job's downloads: the JSON document and the files' names. The CSV is the server's
// (GET /api/v1/jobs/{id}/export.csv: the bytes `mculab export` writes), never made here. Pure.

// The job API object as a downloadable JSON document (what GET /api/v1/jobs/{id} returned).
export function buildJson(detail) {
  return `${JSON.stringify(detail, null, 2)}\n`;
}

export function exportFileName(jobId, extension) {
  const id = Number.isSafeInteger(jobId) && jobId > 0 ? jobId : 'unknown';
  return `mculab-job-${id}.${extension}`;
}
