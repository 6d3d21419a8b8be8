// Browser tests of what the page says about how a figure was measured and whether it exists:
// host (native), emulated and silicon labels; cases without a checksum; compare refusing a ratio
// between different kinds or units; the token from a link and its check against the server.
// Fixture only: they need fixture_server.mjs's special jobs.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  BASE, DESKTOP, FIXTURE, PHONE, TOKEN, fixtureControl, launch, openPage, saveTokenThroughUi, screenshot,
} from './harness.mjs';

const fixtureOnly = FIXTURE ? {} : { skip: 'needs fixture_server.mjs (MCULAB_FIXTURE=1)' };
let desktop;
let ids = {};

before(async () => {
  desktop = await launch(DESKTOP);
  await saveTokenThroughUi(desktop.context);
  if (FIXTURE) ids = await fixtureControl('ids');
});
after(async () => {
  if (desktop) await desktop.close();
});

test('a host job is labelled HOST (native), neither SILICON nor EMULATED', fixtureOnly, async () => {
  const { page, w } = await openPage(desktop.context, `job.html?id=${ids.hostBaseline}`);
  await page.locator('#cases-table tbody tr').first().waitFor();
  assert.equal(await page.locator('#measured-label .measure-word').textContent(), 'HOST RESULTS (native)');
  assert.equal(await page.locator('#job-title .measured').textContent(), 'HOST (native)');
  assert.equal(await page.locator('#cases-table caption .measured').textContent(), 'HOST (native)');
  assert.equal(await page.locator('#provenance .measured').textContent(), 'HOST (native)');
  assert.equal(await page.getByText('SILICON').count(), 0);
  await screenshot(page, 'job-host-label');
  await w.assertClean('host job page');
  await page.close();
});

test('the history and the boards page give the host board its own label', fixtureOnly, async () => {
  const { page, w } = await openPage(desktop.context, `index.html?label=host+baseline`);
  await page.locator(`#jobs-table tbody tr[data-job-id="${ids.hostBaseline}"]`).waitFor();
  assert.equal(await page.locator(`#jobs-table tbody tr[data-job-id="${ids.hostBaseline}"] .measured`).textContent(),
      'HOST (native)');
  await page.goto(new URL('boards.html', BASE).href);
  await page.locator('tr[data-board="host-0"] .measured').waitFor();
  const labels = await page.locator('tr[data-board]').evaluateAll((rows) =>
    Object.fromEntries(rows.map((r) => [r.dataset.board, r.querySelector('.measured').textContent])));
  assert.equal(labels['host-0'], 'HOST (native)', JSON.stringify(labels));
  assert.equal(labels['an547-0'], 'EMULATED');
  assert.equal(labels['h743-0'], 'SILICON');
  await w.assertClean('host labels');
  await page.close();
});

test('a case whose checksum never came shows no MISMATCH', fixtureOnly, async () => {
  const { page, w } = await openPage(desktop.context, `job.html?id=${ids.cancelledMidway}`);
  await page.locator('#cases-table tbody tr').nth(1).waitFor();
  const cells = await page.locator('#cases-table tbody tr td:last-child').allTextContents();
  assert.deepEqual(cells.slice(0, 2), ['ok', 'not reported yet']);
  // The cases the cancel came before: listed, "not run", never zeros and MISMATCH.
  assert.ok(cells.length > 2 && cells.slice(2).every((t) => t === 'not run'), JSON.stringify(cells));
  await w.assertClean('cancelled job');
  await page.close();
});

test('compare refuses a ratio between emulated and silicon jobs and says why', fixtureOnly, async () => {
  for (const [size, viewport] of [['desktop', null], ['phone', PHONE]]) {
    const { page, w } = await openPage(desktop.context, `compare.html?jobs=${ids.emulated},${ids.silicon}`);
    if (viewport) await page.setViewportSize(viewport);
    await page.locator('#compare-table tbody tr').first().waitFor();
    assert.match(await page.locator('#compare-refused').textContent(), /No ratio: the jobs are of different kinds \(emulated,silicon\)/);
    assert.equal(await page.locator('#compare-table .verdict-text').count(), 0, 'no verdict under the warning');
    assert.equal(await page.locator('#compare-summary').count(), 0);
    const cells = await page.locator('#compare-table td.ratio').allTextContents();
    assert.ok(cells.length > 0 && cells.every((t) => t === 'no ratio'), JSON.stringify(cells));
    await screenshot(page, `compare-refused-${size}`);
    await w.assertClean('refused compare');
    await page.close();
  }
});

test('compare refuses a ratio between jobs in different units', fixtureOnly, async () => {
  const { page, w } = await openPage(desktop.context, `compare.html?jobs=${ids.hostBaseline},${ids.emulated}`);
  await page.locator('#compare-table tbody tr').first().waitFor();
  assert.match(await page.locator('#compare-refused').textContent(), /different units \(cycles,ns\)/);
  assert.equal(await page.locator('[data-verdict="regression"], [data-verdict="improvement"]').count(), 0);
  await w.assertClean('units compare');
  await page.close();
});

test('a #token= link opened in a tab already showing the page takes the new token', fixtureOnly, async () => {
  const fresh = await launch(DESKTOP);
  try {
    const page = await fresh.context.newPage();
    await page.goto(new URL('boards.html', BASE).href);
    await page.locator('.token-box summary', { hasText: 'Token: none' }).waitFor();
    await page.evaluate((t) => { location.hash = `token=${encodeURIComponent(t)}`; }, TOKEN);
    await page.locator('.token-box summary', { hasText: 'Token ✓' }).waitFor();
    assert.equal(await page.evaluate(() => localStorage.getItem('mculab.token')), TOKEN);
    assert.equal(await page.evaluate(() => location.hash), '', 'the fragment is removed from the address');
    await page.locator('tr[data-board="host-0"]').waitFor();
    await page.close();
  } finally {
    await fresh.close();
  }
});

test('a token the server refuses is never shown as "Token ✓"', fixtureOnly, async () => {
  const fresh = await launch(DESKTOP);
  try {
    const page = await fresh.context.newPage();
    await page.goto(new URL('boards.html#token=not-a-valid-token', BASE).href);
    await page.locator('.token-box summary', { hasText: 'refused' }).waitFor();
    assert.equal(await page.locator('.token-box summary').textContent(), 'Token ✗ refused by the server');
    assert.equal(await page.locator('.token-box').getAttribute('data-token'), 'refused');
    await screenshot(page, 'token-refused');
    await page.close();
  } finally {
    await fresh.close();
  }
});
