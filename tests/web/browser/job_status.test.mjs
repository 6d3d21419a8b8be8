// Browser tests of what the job page says while a job waits or runs, and of its counter events:
// a queued job names the reservation it waits on and estimates its start from the lease; a running
// job's values are plotted live from the event stream; counter events are a per-case table. Each
// at 1280 px and 390 px, with screenshots under test-output/web/. They need fixture_server.mjs's
// special jobs and its replay control.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  DESKTOP, FIXTURE, PHONE, assertNoPageOverflow, drawnPixels, fixtureControl, launch, openPage,
  saveTokenThroughUi, screenshot,
} from './harness.mjs';

const fixtureOnly = FIXTURE ? {} : { skip: 'needs fixture_server.mjs (MCULAB_FIXTURE=1)' };
const DEVICES = [['desktop', DESKTOP, false], ['phone', PHONE, true]];
const browsers = {};
let ids = {};

before(async () => {
  if (!FIXTURE) return;
  for (const [name, viewport, mobile] of DEVICES) {
    browsers[name] = await launch(viewport, { mobile });
    await saveTokenThroughUi(browsers[name].context);
  }
  ids = await fixtureControl('ids');
});
after(async () => {
  for (const b of Object.values(browsers)) await b.close();
});

test('a queued job says whose reservation it waits on, until when, and when it should start', fixtureOnly, async () => {
  for (const [device] of DEVICES) {
    const { page, w } = await openPage(browsers[device].context, `job.html?id=${ids.queued}`);
    const wait = page.locator('#job-wait');
    await wait.waitFor();
    const text = await wait.textContent();
    assert.match(text, /^Waiting for board h743-0, reserved by chen until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(reserved for the H7 profiling week\)\./);
    assert.match(text, /Next in the queue\. Estimated start \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \((in about [^)]+|any moment now)\)\./);
    // The board asked for and the priority show before the job has a board.
    assert.match(await page.locator('#job-summary').textContent(), /boardh743-0 \(requested\)/);
    assert.match(await page.locator('#job-summary').textContent(), /priorityhigh/);
    if (device === 'phone') await assertNoPageOverflow(page, 'queued job on a phone');
    await screenshot(page, `job-queued-${device}`);
    await w.assertClean(`queued job on ${device}`);
    await page.close();
  }
});

test('a running job plots its values live as the stream brings them', fixtureOnly, async () => {
  for (const [device] of DEVICES) {
    const { page, w } = await openPage(browsers[device].context, `job.html?id=${ids.live}`);
    await page.locator('#cases-table tbody tr').first().waitFor();
    await page.locator('#live-status[data-status="open"]').waitFor();
    assert.ok(await page.locator('#live').isHidden(), 'no live plot for a finished job');
    await fixtureControl(`live?job=${ids.live}&tick_ms=150&step=2`);
    await page.locator('#live').waitFor();
    await page.locator('#plot-live canvas').waitFor();
    await page.waitForFunction(() => Number((document.querySelector('#live-count')?.textContent || '').replace(/\D/g, '')) >= 6);
    assert.ok(await drawnPixels(page, '#plot-live canvas') > 100, 'the live plot draws');
    assert.match(await page.locator('#live-info').textContent(), /^case index \d+ \(id \d+\): [\d,]+ values so far \(running/);
    if (device === 'phone') await assertNoPageOverflow(page, 'live job on a phone');
    await screenshot(page, `job-live-${device}`);
    assert.ok(w.requests.some((u) => u.includes(`/api/v1/events?job=${ids.live}`)), 'the stream asks for this job\'s values');
    // When the job ends the preview goes; the stored values are in the plots.
    await page.locator('#job-title .badge', { hasText: 'succeeded' }).waitFor({ timeout: 60_000 });
    await page.waitForFunction(() => document.querySelector('#live')?.hidden === true);
    await w.assertClean(`live job on ${device}`);
    await page.close();
  }
});

test('counter events are a table per case, as mculab show prints them', fixtureOnly, async () => {
  for (const [device] of DEVICES) {
    const { page, w } = await openPage(browsers[device].context, `job.html?id=${ids.emulated}`);
    await page.locator('#events-table tbody tr').first().waitFor();
    const groups = page.locator('#events-table tbody th.case-cell');
    const cases = await page.locator('#cases-table tbody tr').count();
    assert.ok(cases >= 2);
    assert.equal(await groups.count(), cases, 'one cell per case');
    assert.equal(await page.locator('#events-table tbody tr').count(), 2 * cases, 'two events per case');
    assert.equal(await groups.first().getAttribute('rowspan'), '2');
    const firstCase = await page.locator('#events-table tbody tr').first().locator('td').allTextContents();
    assert.equal(firstCase[0], 'instructions');
    assert.match(await page.locator('#events').textContent(), /Counted by the emulator/);
    const secondRow = await page.locator('#events-table tbody tr').nth(1).locator('td.event-name').textContent();
    assert.equal(secondRow, 'loads');
    if (device === 'phone') {
      assert.ok(await page.locator('#events-table .col-min').first().isHidden(), 'min is left to wider screens');
      await assertNoPageOverflow(page, 'events on a phone');
    }
    await screenshot(page, `job-events-${device}`);
    await w.assertClean(`events on ${device}`);
    await page.close();
  }
});

test('a job without counter events has no events section', fixtureOnly, async () => {
  const { page, w } = await openPage(browsers.desktop.context, `job.html?id=${ids.hostBaseline}`);
  await page.locator('#cases-table tbody tr').first().waitFor();
  assert.ok(await page.locator('#events').isHidden());
  assert.equal(await page.locator('#job-reruns').count(), 0, 'no --reruns, no reruns line');
  await w.assertClean('no events');
  await page.close();
});

test('a job submitted with --reruns says how many reruns it made and at what cv', fixtureOnly, async () => {
  const { page, w } = await openPage(browsers.desktop.context, `job.html?id=${ids.hostSlower}`);
  await page.locator('#job-reruns').waitFor();
  assert.equal(await page.locator('#job-reruns').textContent(), "1 of 2 while a case's cv is above 5%");
  await w.assertClean('reruns');
  await page.close();
});
