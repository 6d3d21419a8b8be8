// Browser tests of the web page in headless Chromium: history (filters, sorting, paging, the
// compare selection), job (plot, histogram, table, label, downloads, live progress), compare
// (ratios and verdicts), boards, and user-supplied HTML rendered as text under the CSP.
// Generic tests find their subjects through the API, so they run against a real mculab-server
// with real jobs; tests marked "fixture" need fixture_server.mjs's controls or special jobs.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import {
  BASE, DESKTOP, FIXTURE, PHONE, TOKEN, XSS_LABEL, api, apiText, assertNoPageOverflow, drawnPixels, fixtureControl,
  launch, openPage, saveTokenThroughUi, screenshot,
} from './harness.mjs';

let desktop;
let ids = {};  // the fixture's special jobs, by name
const fixtureOnly = FIXTURE ? {} : { skip: 'needs fixture_server.mjs (MCULAB_FIXTURE=1)' };

before(async () => {
  desktop = await launch(DESKTOP);
  await saveTokenThroughUi(desktop.context);
  if (FIXTURE) ids = await fixtureControl('ids');
});
after(async () => {
  if (desktop) await desktop.close();
});

const rowsText = (page, col) => page.locator(`#jobs-table tbody td.col-${col}`).allTextContents();
const summaryText = (page) => page.locator('#summary').textContent();
const totalOf = (summary) => Number(/of ([\d,]+)/.exec(summary)[1].replace(/,/g, ''));

// Waits until the history table shows a new answer (its summary or first row changed).
async function waitForNewList(page, before) {
  await page.waitForFunction((b) => {
    const s = document.querySelector('#summary')?.textContent;
    const first = document.querySelector('#jobs-table tbody tr')?.dataset.jobId;
    return !document.body.classList.contains('loading') && s && `${s}|${first}` !== b;
  }, before);
}
async function listKey(page) {
  return page.evaluate(() => `${document.querySelector('#summary')?.textContent}|${document.querySelector('#jobs-table tbody tr')?.dataset.jobId}`);
}

async function succeededJobs(params = '') {
  const { jobs } = await api(`jobs?state=succeeded&limit=50${params}`);
  return jobs.filter((j) => j.num_cases > 0);
}

test('pages are served with the Content-Security-Policy that forbids inline code', async () => {
  for (const path of ['index.html', 'job.html', 'compare.html', 'boards.html', 'trend.html']) {
    const res = await fetch(new URL(path, BASE));
    assert.equal(res.status, 200, path);
    const csp = res.headers.get('content-security-policy') || '';
    assert.match(csp, /script-src 'self'/, path);
    assert.match(csp, /style-src 'self'/, path);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/, path);
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff', path);
  }
});

test('history lists jobs, one page at a time, and a filter narrows them', async () => {
  const { page, w } = await openPage(desktop.context, 'index.html');
  await page.locator('#jobs-table tbody tr').first().waitFor();
  const all = totalOf(await summaryText(page));
  assert.ok(all > 0);
  const rows = await page.locator('#jobs-table tbody tr').count();
  assert.ok(rows > 0 && rows <= 50, `${rows} rows on the first page`);

  const op = (await rowsText(page, 'op'))[0];
  let before = await listKey(page);
  await page.locator('#f-op').fill(op);
  await page.locator('#f-op').press('Enter');
  await waitForNewList(page, before);
  for (const v of await rowsText(page, 'op')) assert.equal(v, op);
  const byOp = totalOf(await summaryText(page));
  assert.ok(byOp <= all);
  assert.match(page.url(), /[?&]op=/);

  before = await listKey(page);
  await page.locator('#f-state').selectOption('succeeded');
  await waitForNewList(page, before);
  for (const v of await page.locator('#jobs-table tbody td.col-state').allTextContents()) assert.equal(v, 'succeeded');
  if (FIXTURE) assert.ok(totalOf(await summaryText(page)) < byOp, 'the state filter narrowed the list');

  // Never everything at once: every list request asked for one page.
  const listCalls = w.requests.filter((u) => /\/api\/v1\/jobs\?/.test(u));
  assert.ok(listCalls.length >= 3);
  for (const u of listCalls) assert.ok(Number(new URL(u).searchParams.get('limit')) <= 500, u);
  await w.assertClean('history');
  await page.close();
});

test('the date range filter keeps jobs submitted on those days', async () => {
  const newest = (await api('jobs?limit=1&sort=created')).jobs[0];
  const d = new Date(newest.created_ms);
  const day = d.toISOString().slice(0, 10);  // the page prints and filters UTC days
  const { page, w } = await openPage(desktop.context, `index.html?from=${day}&to=${day}`);
  await page.locator('#jobs-table tbody tr').first().waitFor();
  assert.equal(await page.locator('#f-from').inputValue(), day);
  for (const t of await rowsText(page, 'created')) assert.ok(t.startsWith(day), `${t} is on ${day}`);
  await w.assertClean('history by date');
  await page.close();
});

test('clicking a column header sorts by it and clicking again reverses the order', async () => {
  const { page, w } = await openPage(desktop.context, 'index.html');
  await page.locator('#jobs-table tbody tr').first().waitFor();
  const ids0 = (await rowsText(page, 'id')).map((t) => Number(t.slice(1)));
  for (let i = 1; i < ids0.length; i++) assert.ok(ids0[i - 1] > ids0[i], 'newest first by default');

  let before = await listKey(page);
  await page.locator('button.sort[data-sort="id"]').click();
  await waitForNewList(page, before);
  const ids1 = (await rowsText(page, 'id')).map((t) => Number(t.slice(1)));
  for (let i = 1; i < ids1.length; i++) assert.ok(ids1[i - 1] < ids1[i], 'oldest first after one click');
  assert.notDeepEqual(ids1, ids0);
  assert.equal(await page.locator('th.col-id').getAttribute('aria-sort'), 'ascending');

  before = await listKey(page);
  await page.locator('button.sort[data-sort="user"]').click();
  await waitForNewList(page, before);
  const users = await rowsText(page, 'user');
  for (let i = 1; i < users.length; i++) assert.ok(users[i - 1] >= users[i], `${users[i - 1]} before ${users[i]}`);
  assert.equal(await page.locator('th.col-user').getAttribute('aria-sort'), 'descending');
  await w.assertClean('sorting');
  await page.close();
});

test('paging moves through the list and "N of total" follows', async () => {
  const { page, w } = await openPage(desktop.context, 'index.html?limit=25');
  await page.locator('#jobs-table tbody tr').first().waitFor();
  const total = totalOf(await summaryText(page));
  if (total <= 25) {
    assert.ok(await page.locator('#pager .page-next').isDisabled());
    await page.close();
    return;
  }
  const firstPage = await rowsText(page, 'id');
  let before = await listKey(page);
  await page.locator('#pager .page-next').click();
  await waitForNewList(page, before);
  assert.match(await summaryText(page), /^Jobs 26–50 of /);
  assert.match(page.url(), /offset=25/);
  const second = await rowsText(page, 'id');
  assert.equal(second.filter((id) => firstPage.includes(id)).length, 0, 'no job on both pages');

  before = await listKey(page);
  await page.locator('#pager .page-last').click();
  await waitForNewList(page, before);
  const pages = Math.ceil(total / 25);
  assert.equal(await page.locator('#pager .page-of').textContent(), `page ${pages.toLocaleString('en-US')} of ${pages.toLocaleString('en-US')}`);
  assert.ok(await page.locator('#pager .page-next').isDisabled());

  await page.goBack();  // the address bar holds the view: back returns to page 2
  await page.waitForFunction(() => /^Jobs 26–50 of /.test(document.querySelector('#summary')?.textContent || ''));
  await w.assertClean('paging');
  await page.close();
});

test('a job page draws its plot and histogram and shows its statistics with units and the measurement label', async () => {
  const job = FIXTURE ? await api(`jobs/${ids.hostBaseline}`) : (await succeededJobs())[0];
  assert.ok(job, 'a succeeded job with cases exists');
  const detail = await api(`jobs/${job.id}`);
  const { page, w } = await openPage(desktop.context, `job.html?id=${job.id}`);
  await page.locator('#cases-table tbody tr').first().waitFor();
  assert.equal(await page.locator('#cases-table tbody tr').count(), detail.cases.length);
  const unit = detail.cases[0].unit;
  assert.match(await page.locator('#cases-table thead').textContent(), new RegExp(`median \\(${unit}\\)`));

  const label = await page.locator('#measured-label .measure-word').textContent();
  const measured = (detail.provenance && detail.provenance.measured) || job.measured ||
      (job.emulated ? 'emulated' : 'silicon');
  assert.equal(label, { emulated: 'EMULATED RESULTS', host: 'HOST RESULTS (native)', silicon: 'SILICON RESULTS' }[measured]);
  assert.ok(await page.locator('#measured-label').isVisible());

  await page.locator('#plot-line canvas').waitFor();
  await page.locator('#plot-hist canvas').waitFor();
  await page.waitForFunction(() => document.querySelector('#plot-line canvas').width > 100);
  assert.ok(await drawnPixels(page, '#plot-line canvas') > 200, 'the line plot has drawn pixels');
  assert.ok(await drawnPixels(page, '#plot-hist canvas') > 200, 'the histogram has drawn pixels');

  // Another case redraws the plot from that case's samples.
  if (detail.cases.length > 1) {
    const other = detail.cases[1];
    await page.locator('#case-select').selectOption(String(other.index));
    await page.waitForFunction((id) => document.querySelector('#plot-info')?.textContent.startsWith(`case ${id}`), other.id);
    await page.locator('#plot-line canvas').waitFor();
    assert.ok(await drawnPixels(page, '#plot-line canvas') > 200);
    assert.match(page.url(), new RegExp(`case=${other.index}`));
  }

  // The CSV download is the server's file (GET .../export.csv), the bytes `mculab export` writes.
  const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#download-csv').click()]);
  const csv = readFileSync(await download.path(), 'utf8');
  assert.equal(csv, await apiText(`jobs/${job.id}/export.csv`));
  assert.match(csv, /^id,/);
  assert.match(download.suggestedFilename(), new RegExp(`^mculab-job-${job.id}\\.csv$`));
  const [jsonDownload] = await Promise.all([page.waitForEvent('download'), page.locator('#download-json').click()]);
  assert.deepEqual(JSON.parse(readFileSync(await jsonDownload.path(), 'utf8')), detail);

  assert.ok(await page.locator('#provenance').isVisible());
  await w.assertClean('job page');
  await page.close();
});

test('an emulated job is labelled EMULATED in the banner, the title and the table', async () => {
  const job = FIXTURE ? { id: ids.emulated } : (await succeededJobs()).find((j) => j.emulated);
  if (!job) return;  // a real lab without emulated jobs: nothing to check
  const { page, w } = await openPage(desktop.context, `job.html?id=${job.id}`);
  await page.locator('#cases-table tbody tr').first().waitFor();
  assert.equal(await page.locator('#measured-label .measure-word').textContent(), 'EMULATED RESULTS');
  assert.equal(await page.locator('#job-title .measured').textContent(), 'EMULATED');
  assert.equal(await page.locator('#cases-table caption .measured').textContent(), 'EMULATED');
  await page.locator('#plot-line canvas').waitFor();
  assert.ok(await drawnPixels(page, '#plot-line canvas') > 200, 'a flat line (identical counts) is still drawn');
  await w.assertClean('emulated job page');
  await page.close();
});

test('compare shows a ratio with its interval and a verdict for every case', async () => {
  let a;
  let b;
  if (FIXTURE) {
    [a, b] = [ids.hostBaseline, ids.hostSlower];
  } else {
    const jobs = await succeededJobs();
    const first = jobs[0];
    const twin = jobs.find((j) => j.id !== first.id && j.op === first.op && j.kind === first.kind);
    assert.ok(twin, 'two succeeded jobs of the same op and kind exist');
    [a, b] = [first.id, twin.id];
  }
  const expected = await api(`compare?jobs=${a},${b}`);
  const { page, w } = await openPage(desktop.context, `compare.html?jobs=${a},${b}`);
  await page.locator('#compare-table tbody tr').first().waitFor();
  const rows = page.locator('#compare-table tbody tr');
  assert.equal(await rows.count(), expected.cases.length);
  for (let i = 0; i < expected.cases.length; i++) {
    const cell = rows.nth(i).locator('td.ratio');
    assert.match(await cell.locator('.ratio-value').textContent(), /^\d+\.\d{3} \[\d+\.\d{3}, \d+\.\d{3}\]$/);
    // The page's words are the server's verdict (the one `mculab compare` prints), when it gives one.
    const words = { 'slower': /slower/, 'faster': /faster/, 'no change': /no significant change/, 'unclear': /unclear/,
      'unstable': /unstable/ };
    const verdict = expected.cases[i].ratios[1] && expected.cases[i].ratios[1].verdict;
    assert.match(await cell.locator('.verdict-text').textContent(),
        verdict ? words[verdict] : /slower|faster|no significant change|unclear|unstable/);
    // Beside each median, how far its timings can be trusted: "exact" for an emulated count, else the cv.
    const variations = await rows.nth(i).locator('.variation').allTextContents();
    assert.equal(variations.length, expected.jobs.length);
    expected.cases[i].variation.forEach((v, k) => {
      assert.match(variations[k], v.stability === 'exact' ? /^ exact/ : v.stability === 'unstable' ? /^ cv [\d.]+% unstable/ : /^ cv [\d.]+%/);
    });
  }
  if (FIXTURE) {
    // The debug build: case 0 and 3 slower, case 2 faster, case 1 the same.
    const verdicts = await page.locator('#compare-table td.ratio').evaluateAll((tds) => tds.map((td) => td.dataset.verdict));
    assert.deepEqual(verdicts, ['regression', 'unchanged', 'improvement', 'regression']);
    assert.equal(await page.locator('td.verdict-regression .verdict-text').first().textContent(), '▲ slower (significant)');
    assert.equal(await page.locator('.compare-warning').count(), 0);
  }
  await w.assertClean('compare');
  await page.close();
});

test('compare warns when emulated and silicon results are mixed', async () => {
  let pair;
  if (FIXTURE) {
    pair = [ids.emulated, ids.silicon];
  } else {
    const jobs = await succeededJobs();
    const em = jobs.find((j) => j.emulated);
    // Silicon, not the host board: a host process has its own label (HOST) and warning.
    const si = em && jobs.find((j) => j.measured === 'silicon' && j.op === em.op);
    if (!em || !si) return;  // a real lab without silicon boards: nothing to mix
    pair = [si.id, em.id];
  }
  const { page, w } = await openPage(desktop.context, `compare.html?jobs=${pair.join(',')}`);
  await page.locator('#compare-table').waitFor();
  assert.match(await page.locator('.compare-warning').first().textContent(), /Emulated and silicon results are mixed/);
  await w.assertClean('mixed compare');
  await page.close();
});

test('jobs ticked in the history open together on the compare page, the first as baseline', async () => {
  const { page, w } = await openPage(desktop.context, 'index.html?state=succeeded');
  await page.locator('#jobs-table tbody tr').nth(1).waitFor();
  const picked = [];
  for (const i of [1, 0]) {
    const row = page.locator('#jobs-table tbody tr').nth(i);
    picked.push(Number(await row.getAttribute('data-job-id')));
    await row.locator('input[type=checkbox]').check();
  }
  assert.match(await page.locator('#selection').textContent(), new RegExp(`#${picked[0]} \\(baseline\\)`));
  await page.locator('#compare-selected').click();
  await page.waitForURL(/compare\.html\?jobs=/);
  assert.equal(new URL(page.url()).searchParams.get('jobs'), picked.join(','));
  await page.locator('#compare-jobs tbody tr').first().waitFor();
  assert.equal(await page.locator('#compare-jobs tbody tr').first().locator('a').textContent(), `#${picked[0]}`);
  await page.locator('#compare-results').waitFor();
  await w.assertClean('compare from selection');
  await page.close();
});

test('the boards page shows every board with state, health and queue', async () => {
  const { boards } = await api('boards');
  assert.ok(boards.length > 0, 'the lab has boards');
  const { page, w } = await openPage(desktop.context, 'boards.html');
  await page.locator('#boards-table tbody tr').first().waitFor();
  assert.equal(await page.locator('#boards-table tbody tr').count(), boards.length);
  for (const b of boards) {
    const row = page.locator(`#boards-table tbody tr[data-board="${b.name}"]`);
    const text = await row.textContent();
    assert.ok(text.includes(b.state) && text.includes(b.health) && text.includes(b.kind), `${b.name}: ${text}`);
    if (b.holder) assert.ok(text.includes(b.holder));
  }
  await w.assertClean('boards');
  await page.close();
});

test('the boards page shows who holds a reserved board, until when, and why', async () => {
  const { boards } = await api('boards');
  // The fixture's h743-0 is reserved; tests/e2e/test_web.py reserves host-0 on the real server.
  const held = boards.filter((b) => b.holder);
  assert.ok(held.length > 0, `a board is reserved: ${JSON.stringify(boards)}`);
  const { page, w } = await openPage(desktop.context, 'boards.html');
  await page.locator('#boards-table tbody tr').first().waitFor();
  const headings = await page.locator('#boards-table thead th').allTextContents();
  const column = (name) => headings.indexOf(name);
  for (const b of held) {
    assert.ok(b.lease_until_ms > Date.now(), `${b.name}: the lease ends in the future (${b.lease_until_ms})`);
    const cells = await page.locator(`#boards-table tbody tr[data-board="${b.name}"] > *`).allTextContents();
    assert.equal(cells[column('holder')], b.holder, `${b.name}: ${JSON.stringify(cells)}`);
    const lease = cells[column('lease ends')];
    assert.notEqual(lease, '-', `${b.name}: no lease end shown`);
    const year = String(new Date(b.lease_until_ms).getFullYear());
    assert.ok(lease.includes(year), `${b.name}: the lease end ${lease} is not ${new Date(b.lease_until_ms).toISOString()}`);
    if (b.note) assert.equal(cells[column('note')], b.note);
  }
  for (const b of boards.filter((x) => !x.holder)) {
    const cells = await page.locator(`#boards-table tbody tr[data-board="${b.name}"] > *`).allTextContents();
    assert.equal(cells[column('holder')], '-', b.name);
    assert.equal(cells[column('lease ends')], '-', b.name);
  }
  await screenshot(page, 'boards-reserved-desktop');
  await w.assertClean('boards with a reservation');
  await page.close();
});

test('user-supplied HTML in labels, messages, notes and tags renders as text and runs nothing', async () => {
  const { jobs } = await api(`jobs?label=${encodeURIComponent(XSS_LABEL)}&limit=5`);
  const job = jobs.find((j) => j.label === XSS_LABEL);
  assert.ok(job, `a job labelled ${XSS_LABEL} exists (submit one with --label to test a real server)`);

  const { page, w } = await openPage(desktop.context, `index.html?label=${encodeURIComponent(XSS_LABEL)}`);
  await page.locator(`#jobs-table tbody tr[data-job-id="${job.id}"]`).waitFor();
  const cell = page.locator(`#jobs-table tbody tr[data-job-id="${job.id}"] td.col-label`);
  assert.equal(await cell.textContent(), XSS_LABEL);
  assert.equal(await page.locator('#jobs-table img, #jobs-table script').count(), 0);

  await page.goto(new URL(`job.html?id=${job.id}`, BASE).href);
  await page.locator('#job-label').waitFor();
  assert.equal(await page.locator('#job-label').textContent(), XSS_LABEL);
  assert.equal(await page.locator('main img, main svg, main script, main b').count(), 0);
  if (FIXTURE) {
    assert.match(await page.locator('#job-message-text').textContent(), /^<script>alert\("message"\)<\/script>/);
    assert.match(await page.locator('#provenance').textContent(), /<img src=y onerror=alert\(2\)>/);
    assert.match(await page.locator('#provenance').textContent(), /<svg onload=alert\(3\)>gcc 12/);
    assert.ok((await page.title()).includes(XSS_LABEL));

    await page.goto(new URL(`compare.html?jobs=${ids.hostBaseline},${job.id}`, BASE).href);
    await page.locator('#compare-jobs').waitFor();
    assert.ok((await page.locator('#compare-jobs').textContent()).includes(XSS_LABEL));

    await page.goto(new URL('boards.html', BASE).href);
    await page.locator('#boards-table').waitFor();
    const note = page.locator('#boards-table tr[data-board="f746-1"] td.col-note');
    assert.equal(await note.textContent(), '<b>USB hub</b> resets under load <script>alert("board")</script>');
    assert.ok((await page.locator('#boards-table tr[data-board="h743-0"]').textContent()).includes('<i>rack</i>=A<3>'));
    assert.equal(await page.locator('#boards-table b, #boards-table i, #boards-table script').count(), 0);
  }
  await w.assertClean('XSS');
  await page.close();
});

test('fixture: live progress arrives over the event stream and survives a dropped connection', fixtureOnly, async () => {
  const { page, w } = await openPage(desktop.context, `job.html?id=${ids.live}`);
  await page.locator('#cases-table tbody tr').first().waitFor();
  await page.locator('#live-status[data-status="open"]').waitFor();
  await fixtureControl(`live?job=${ids.live}&tick_ms=100&step=3`);
  await page.locator('#job-title .badge', { hasText: /preparing|running/ }).first().waitFor();
  await page.waitForFunction(() => {
    const bar = document.querySelector('#progress-bar');
    return bar && bar.value > 0 && bar.value < bar.max;
  });
  await fixtureControl('drop-events');
  await page.locator('#live-status[data-status="retrying"], #live-status[data-status="connecting"]').first().waitFor();
  await page.locator('#live-status[data-status="open"]').waitFor();
  await page.waitForFunction(() => document.querySelector('#progress-text')?.textContent.endsWith('(100%)'));
  await page.locator('#job-title .badge', { hasText: 'succeeded' }).waitFor();
  await page.waitForFunction(() => document.querySelectorAll('#cases-table tbody tr').length === 3);
  const streams = w.requests.filter((u) => /\/api\/v1\/events(\?|$)/.test(u));
  assert.ok(streams.length >= 2, `reconnected (${streams.length} event streams opened)`);
  await w.assertClean('live job');
  await page.close();
});

test('fixture: a long run is plotted downsampled and says so', fixtureOnly, async () => {
  const { page, w } = await openPage(desktop.context, `job.html?id=${ids.long}`);
  await page.locator('#downsampled-note').waitFor();
  assert.match(await page.locator('#plot-info').textContent(), /20,000 iterations/);
  await page.locator('#plot-line canvas').waitFor();
  assert.ok(await drawnPixels(page, '#plot-line canvas') > 200);
  assert.ok(await drawnPixels(page, '#plot-hist canvas') > 200);
  const samples = w.requests.filter((u) => u.includes('/samples?'));
  for (const u of samples) assert.ok(Number(new URL(u).searchParams.get('max_points')) <= 5000, u);
  await w.assertClean('long job');
  await page.close();
});

test('fixture: per-op and memory sections show when present and hide when absent', fixtureOnly, async () => {
  const { page, w } = await openPage(desktop.context, `job.html?id=${ids.silicon}`);
  await page.locator('#ops-table tbody tr').first().waitFor();
  assert.equal(await page.locator('#ops-table tbody tr').count(), 3);
  assert.ok((await page.locator('#ops-table').textContent()).includes('<b>pad</b> & copy'));
  assert.match(await page.locator('#memory-table').textContent(), /arena_used_bytes41,472 B/);
  assert.match(await page.locator('#memory-table').textContent(), /flash\.code_bytes/);
  await page.goto(new URL(`job.html?id=${ids.hostBaseline}`, BASE).href);
  await page.locator('#cases-table tbody tr').first().waitFor();
  assert.ok(await page.locator('#ops').isHidden());
  assert.ok(await page.locator('#memory').isHidden());
  await w.assertClean('ops and memory');
  await page.close();
});

test('fixture: a queued job says it has no results yet and a failed job shows its message', fixtureOnly, async () => {
  const { page, w } = await openPage(desktop.context, `job.html?id=${ids.queued}`);
  await page.locator('#no-results').waitFor();
  assert.match(await page.locator('#no-results').textContent(), /No results yet \(queued\)/);
  assert.ok(await page.locator('#plots').isHidden());
  await page.goto(new URL(`job.html?id=${ids.failed}`, BASE).href);
  await page.locator('#job-message-text').waitFor();
  assert.match(await page.locator('#job-message-text').textContent(), /checksum mismatch/);
  assert.equal(await page.locator('#cases-table .checksum-bad').count(), 0);
  await w.assertClean('queued and failed jobs');
  await page.close();
});

test('fixture: without a token the page says how to give one', { skip: !FIXTURE || !TOKEN ? 'needs the fixture with a token' : false }, async () => {
  const fresh = await launch(DESKTOP);
  try {
    const page = await fresh.context.newPage();
    await page.goto(new URL('index.html', BASE).href);
    await page.locator('#history-message .message-error').waitFor();
    assert.match(await page.locator('#history-message').textContent(), /API token.*"Token" box/);
    assert.equal(await page.locator('.token-box summary').textContent(), 'Token: none');
    await page.locator('#live-status[data-status="unauthorized"]').waitFor();
    // Giving the token brings the list and the live updates.
    await page.locator('.token-box summary').click();
    await page.locator('#token-input').fill(TOKEN);
    await page.locator('#token-form button[type=submit]').click();
    await page.locator('#jobs-table tbody tr').first().waitFor();
    await page.locator('#live-status[data-status="open"]').waitFor();
  } finally {
    await fresh.close();
  }
});

test('a #token= link signs the page in and leaves no token in the address bar', { skip: !TOKEN ? 'needs a token' : false }, async () => {
  const fresh = await launch(DESKTOP);
  try {
    const page = await fresh.context.newPage();
    const requests = [];
    page.on('request', (r) => requests.push(r.url()));
    await page.goto(new URL(`index.html#token=${encodeURIComponent(TOKEN)}`, BASE).href);
    await page.locator('#jobs-table tbody tr').first().waitFor();
    assert.equal(await page.locator('.token-box summary').textContent(), 'Token ✓');
    assert.ok(!page.url().includes('token='), `the address still holds the token: ${page.url()}`);
    assert.equal(await page.evaluate(() => localStorage.getItem('mculab.token')), TOKEN);
    assert.deepEqual(requests.filter((u) => u.includes(TOKEN)), [], 'the token went into a URL');
  } finally {
    await fresh.close();
  }
});

test('bad addresses get a message, not a blank page', async () => {
  const { page, w } = await openPage(desktop.context, 'job.html');
  await page.locator('#job-message .message-error').waitFor();
  await page.goto(new URL('compare.html?jobs=1,x', BASE).href);
  assert.match(await page.locator('#compare-message').textContent(), /"x" is not a job id/);
  await w.assertClean('bad addresses');
  await page.close();
});

// Screenshots of every page on a laptop and a phone, for people to look at; the phone pass also
// checks that nothing makes the page wider than the screen.
test('screenshots of every page, desktop and phone', async () => {
  const job = FIXTURE ? ids.hostBaseline : (await succeededJobs())[0].id;
  const emulatedJob = FIXTURE ? ids.emulated : ((await succeededJobs()).find((j) => j.emulated) || {}).id;
  let pair = FIXTURE ? [ids.hostBaseline, ids.hostSlower, ids.xss] : null;
  if (!pair) {
    const jobs = await succeededJobs();
    const twin = jobs.find((j) => j.id !== jobs[0].id && j.op === jobs[0].op && j.kind === jobs[0].kind);
    pair = twin ? [jobs[0].id, twin.id] : null;
  }
  const shots = [
    ['history', 'index.html', '#jobs-table tbody tr'],
    ['job', `job.html?id=${job}`, '#plot-hist canvas'],
    emulatedJob ? ['job-emulated', `job.html?id=${emulatedJob}`, '#plot-hist canvas'] : null,
    pair ? ['compare', `compare.html?jobs=${pair.join(',')}`, '#compare-table'] : null,
    ['boards', 'boards.html', '#boards-table tbody tr'],
  ].filter(Boolean);
  const phone = await launch(PHONE, { mobile: true });
  try {
    await saveTokenThroughUi(phone.context);
    for (const [device, browser] of [['desktop', desktop], ['phone', phone]]) {
      for (const [name, path, ready] of shots) {
        const { page, w } = await openPage(browser.context, path);
        await page.locator(ready).first().waitFor();
        await page.waitForFunction(() => !document.body.classList.contains('loading'));
        if (device === 'phone') await assertNoPageOverflow(page, `${name} on a phone`);
        await screenshot(page, `${name}-${device}`);
        await w.assertClean(`${name} on ${device}`);
        await page.close();
      }
    }
  } finally {
    await phone.close();
  }
});
