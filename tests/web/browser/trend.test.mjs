// Browser tests of the trend view: a job page's "trend" link opens its case's series; the page
// plots it (median line, interval band, runner-change and change-point marks), lists each change
// point with links to its two jobs and their comparison, and tabulates the jobs, at 1280 and at
// 390 px. Subjects are found through the API, so the tests run against fixture_server.mjs and
// against a real mculab-server with real jobs alike; what they check comes from GET
// /api/v1/series, never from constants.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  DESKTOP, FIXTURE, PHONE, api, assertNoPageOverflow, drawnPixels, launch, openPage, saveTokenThroughUi, screenshot,
} from './harness.mjs';

let desktop;
let phone;
let subject;  // {job, trendPath, series}

before(async () => {
  desktop = await launch(DESKTOP);
  phone = await launch(PHONE, { mobile: true });
  await saveTokenThroughUi(desktop.context);
  await saveTokenThroughUi(phone.context);
});
after(async () => {
  if (desktop) await desktop.close();
  if (phone) await phone.close();
});

// The newest succeeded job with results whose first case's series has at least two jobs.
async function findSubject() {
  if (subject) return subject;
  const { jobs } = await api('jobs?state=succeeded&limit=50');
  for (const j of jobs) {
    const detail = await api(`jobs/${j.id}`);
    const c = (detail.cases || []).find((x) => x.n > 0);
    if (!c) continue;
    const q = new URLSearchParams({ kind: j.kind, op: j.op });
    if (c.params && c.params.length) q.set('params', c.params.join(','));
    else q.set('case', String(c.id));
    const series = await api(`series?${q}`);
    if (series.jobs.length >= 2) {
      subject = { job: j, caseIndex: c.index, series, trendPath: `trend.html?${q}` };
      return subject;
    }
  }
  throw new Error('no succeeded job whose case has a series of two or more jobs');
}

test("a job page's trend link opens its case's series, plotted and tabulated (1280 px)", async () => {
  const s = await findSubject();
  const { page, w } = await openPage(desktop.context, `job.html?id=${s.job.id}`);
  const link = page.locator(`#cases-table tr[data-case-index="${s.caseIndex}"] a.trend-link`);
  await link.waitFor();
  await link.click();
  await page.waitForURL(/trend\.html\?/);
  await page.locator('#trend-table tbody tr').first().waitFor();
  const url = new URL(page.url());
  assert.equal(url.searchParams.get('kind'), s.job.kind);
  assert.equal(url.searchParams.get('op'), s.job.op);

  // One row per job of the API's series, in its order, the change points' first jobs marked.
  const rowIds = await page.locator('#trend-table tbody tr').evaluateAll((rows) => rows.map((r) => Number(r.dataset.jobId)));
  assert.deepEqual(rowIds, s.series.jobs.map((j) => j.id));
  const marked = await page.locator('#trend-table tbody tr.change-point').evaluateAll((rows) => rows.map((r) => Number(r.dataset.jobId)));
  assert.deepEqual(marked, s.series.changes.map((c) => c.after_job));
  assert.equal(await page.locator('#trend-table .runner-changed').count(),
      s.series.jobs.filter((j) => j.runner_changed).length);
  const median0 = await page.locator('#trend-table tbody tr').first().locator('td.num').first().textContent();
  assert.ok(median0.length > 0);
  // Labels are text, never markup (the XSS job's label in the e2e lab).
  const labels = await page.locator('#trend-table td.col-label').allTextContents();
  assert.deepEqual(labels, s.series.jobs.map((j) => j.label || ''));

  // The plot is drawn.
  await page.locator('#trend-plot canvas').waitFor();
  assert.ok(await drawnPixels(page, '#trend-plot canvas') > 1000, 'the trend plot is empty');

  // Each change point: its step, links to both jobs and to their comparison.
  if (FIXTURE) assert.ok(s.series.changes.length >= 1, 'the fixture series has a change point');
  const items = page.locator('#trend-changes li');
  assert.equal(await items.count(), s.series.changes.length);
  for (let i = 0; i < s.series.changes.length; i++) {
    const c = s.series.changes[i];
    const hrefs = await items.nth(i).locator('a').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
    assert.deepEqual(hrefs, [`job.html?id=${c.before_job}`, `job.html?id=${c.after_job}`,
      `compare.html?jobs=${c.before_job},${c.after_job}`]);
    assert.match(await items.nth(i).textContent(), c.ratio > 1 ? /slower/ : /faster/);
  }
  if (s.series.changes.length === 0) await page.locator('#trend-no-changes').waitFor();
  await screenshot(page, 'trend-desktop');

  // Following a change point's comparison opens the compare page of its two jobs.
  if (s.series.changes.length) {
    await items.first().locator('a.compare-link').click();
    await page.waitForURL(/compare\.html\?jobs=/);
    await page.locator('#compare-table').waitFor();
  }
  await w.assertClean('trend page');
  await page.close();
});

test('at 390 px the trend page fits the screen: job, median, interval and change', async () => {
  const s = await findSubject();
  const { page, w } = await openPage(phone.context, s.trendPath);
  await page.locator('#trend-table tbody tr').first().waitFor();
  await page.locator('#trend-plot canvas').waitFor();
  assert.ok(await drawnPixels(page, '#trend-plot canvas') > 500, 'the trend plot is empty');
  await assertNoPageOverflow(page, 'trend page at 390 px');
  for (const col of ['col-id', 'col-interval', 'col-change']) {
    assert.ok(await page.locator(`#trend-table thead th.${col}`).isVisible(), `${col} is shown on a phone`);
  }
  for (const col of ['col-created', 'col-board', 'col-runner', 'col-label']) {
    assert.ok(!(await page.locator(`#trend-table thead th.${col}`).isVisible()), `${col} is hidden on a phone`);
  }
  const wrap = await page.locator('#trend-table').evaluate((t) => ({ table: t.scrollWidth, box: t.parentElement.clientWidth }));
  assert.ok(wrap.table <= wrap.box + 1, `the trend table scrolls sideways (${wrap.table} > ${wrap.box})`);
  await screenshot(page, 'trend-phone');
  await w.assertClean('trend page at 390 px');
  await page.close();
});

test('the trend page says what a series needs, and shows the server\'s refusal', async () => {
  const { page, w } = await openPage(desktop.context, 'trend.html?kind=host');
  await page.locator('#trend-message .message-info', { hasText: 'Name an op' }).waitFor();
  const s = await findSubject();
  await page.goto(new URL(`trend.html?kind=${encodeURIComponent(s.job.kind)}&op=conv2d_s8&params=1,2`, page.url()).href);
  await page.locator('#trend-message .message-error', { hasText: '11 parameters' }).waitFor();
  // The browser logs the refused request itself; nothing else may be reported.
  assert.ok(w.problems.every((p) => /status of 400/.test(p)), w.problems.join('\n'));
  w.problems.length = 0;
  // The form names the series: filling it in and pressing Show loads it.
  await page.locator('#trend-params').fill(s.series.series.params ? s.series.series.params.join(',') : '');
  await page.locator('#trend-op').fill(s.job.op);
  if (!s.series.series.params) await page.locator('#trend-case').fill(String(s.series.series.case));
  await page.locator('#trend-form button[type=submit]').click();
  await page.locator('#trend-table tbody tr').first().waitFor();
  assert.equal(await page.locator('#trend-table tbody tr').count(), s.series.jobs.length);
  await w.assertClean('trend page form');
  await page.close();
});

test('the history\'s "changed" filter lists the jobs at a change point, linking to their series', async () => {
  const expected = await api('changes?scan=200');
  const { page, w } = await openPage(desktop.context, 'index.html');
  await page.locator('#jobs-table tbody tr').first().waitFor();
  if (!(await page.locator('#filters-box').evaluate((d) => d.open))) await page.locator('#filters-box summary').click();
  await page.locator('#f-changed').check();
  await page.waitForURL(/changed=1/);
  await page.locator('#summary', { hasText: 'at a change point' }).waitFor();
  const ids = await page.locator('#jobs-table tbody tr').evaluateAll((rows) => rows.map((r) => Number(r.dataset.jobId)));
  assert.deepEqual(ids, expected.jobs.map((j) => j.id));
  if (FIXTURE) assert.ok(expected.jobs.length >= 1, 'the fixture has jobs at a change point');
  for (const job of expected.jobs) {
    const links = page.locator(`#jobs-table tr[data-job-id="${job.id}"] .change-notes a`);
    const hrefs = await links.evaluateAll((as) => as.map((a) => a.getAttribute('href')));
    const c = job.changes[0];
    assert.ok(hrefs[0].startsWith('trend.html?'), hrefs[0]);
    assert.equal(hrefs[1], `compare.html?jobs=${c.before_job},${c.after_job}`);
  }
  // The filter is part of the address: reloading keeps it.
  await page.reload();
  await page.locator('#summary', { hasText: 'at a change point' }).waitFor();
  assert.ok(await page.locator('#f-changed').isChecked());
  await screenshot(page, 'history-changed-desktop');
  if (expected.jobs.length) {
    await page.locator('#jobs-table .change-notes a.trend-link').first().click();
    await page.waitForURL(/trend\.html\?/);
    await page.locator('#trend-changes li').first().waitFor();
  }
  await w.assertClean('history changed filter');
  await page.close();
});
