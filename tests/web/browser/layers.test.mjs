// Browser tests of a model's per-layer view at desktop (1280 px) and phone (390 px) width: the job
// page's bars (share of the inference per layer, each event selectable, figures as text, layer
// names as text) and the compare page's per-layer table of two jobs (ratio per layer). Fixture
// jobs "modelM55" and "modelM55Helium" (tests/web/fixture_data.mjs, layerOps).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  DESKTOP, FIXTURE, PHONE, assertNoPageOverflow, fixtureControl, launch, openPage, saveTokenThroughUi,
  screenshot,
} from './harness.mjs';
import { LONG_LAYER_NAME } from '../fixture_data.mjs';

const fixtureOnly = FIXTURE ? {} : { skip: 'needs fixture_server.mjs (MCULAB_FIXTURE=1)' };
const sizes = {};
let ids = {};

before(async () => {
  sizes.desktop = await launch(DESKTOP);
  sizes.phone = await launch(PHONE, { mobile: true });
  for (const s of Object.values(sizes)) await saveTokenThroughUi(s.context);
  if (FIXTURE) ids = await fixtureControl('ids');
});
after(async () => {
  for (const s of Object.values(sizes)) await s.close();
});

for (const size of ['desktop', 'phone']) {
  test(`${size}: a model job shows one bar per layer with its share, per event`, fixtureOnly, async () => {
    const { page, w } = await openPage(sizes[size].context, `job.html?id=${ids.modelM55}`);
    await page.locator('#layer-bars li').first().waitFor();
    assert.equal(await page.locator('#layer-bars li').count(), 7);
    const first = await page.locator('#layer-bars li').first().textContent();
    assert.match(first, /#0 CONV_2D conv1/);
    assert.match(first, /46\.2 % · 40,000 cycles/);
    // A name the model carries is text, never markup.
    assert.match(await page.locator('#layer-bars li').nth(5).textContent(), /<b>fc<\/b>/);
    assert.equal(await page.locator('#layer-bars b').count(), 0);
    // The largest layer's bar is full, a small one nearly empty; drawn, not just written.
    const widths = await page.locator('#layer-bars .layer-bar-fill').evaluateAll(
        (els) => els.map((e) => e.getBoundingClientRect().width / e.parentElement.getBoundingClientRect().width));
    assert.ok(Math.abs(widths[0] - 1) < 0.01, `largest bar ${widths[0]}`);
    assert.ok(widths[4] < 0.02, `RESHAPE bar ${widths[4]}`);
    assert.ok(await page.locator('#layer-bars .layer-bar').first().isVisible());
    await page.locator('#layer-metric').selectOption('instructions');
    assert.match(await page.locator('#layer-bars li').first().textContent(), /32,000 instructions/);
    // A 100-character layer name is whole, wrapped rather than cut.
    assert.equal(LONG_LAYER_NAME.length, 100);
    const long = page.locator('#layer-bars li').nth(2).locator('.layer-name');
    assert.equal(await long.textContent(), LONG_LAYER_NAME);
    assert.ok(await long.evaluate((e) => e.scrollWidth <= e.clientWidth + 1), 'the name is not clipped');
    // The raw rows (2 events x 7 layers) wait behind a toggle, whole when opened.
    assert.equal(await page.locator('#ops-raw').getAttribute('open'), null);
    assert.equal(await page.locator('#ops-raw summary').textContent(), 'All 14 raw rows (one per case, layer and event)');
    assert.equal(await page.locator('#ops-table').isVisible(), false);
    await page.locator('#ops-raw summary').click();
    await page.locator('#ops-table').waitFor();
    assert.equal(await page.locator('#ops-table tbody tr').count(), 14);
    if (size === 'desktop') {
      const overflow = await page.locator('#ops-table').evaluate((t) => t.parentElement.scrollWidth - t.parentElement.clientWidth);
      assert.ok(overflow <= 1, `no column of the raw rows is cut at 1280 px (${overflow} px hidden)`);
    }
    // The long name wraps inside its cell, over no other column.
    const spill = await page.locator('#ops-table tbody tr').nth(2).locator('td.col-name')
        .evaluate((td) => td.scrollWidth - td.clientWidth);
    assert.ok(spill <= 1, `the layer name spills ${spill} px out of its cell`);
    assert.ok((await page.locator('#ops-table tbody').textContent()).includes(LONG_LAYER_NAME));
    assert.ok((await page.locator('#ops-table tbody').textContent()).includes('DEPTHWISE_CONV_2D'));
    await assertNoPageOverflow(page, `job ${size}`);
    await screenshot(page, `layers-job-${size}`);
    await w.assertClean(`layers job ${size}`);
    await page.close();
  });

  test(`${size}: two model jobs compare layer by layer`, fixtureOnly, async () => {
    const { page, w } = await openPage(sizes[size].context,
        `compare.html?jobs=${ids.modelM55},${ids.modelM55Helium}`);
    await page.locator('#layer-compare tbody tr').first().waitFor();
    assert.equal(await page.locator('#layer-compare tbody tr').count(), 7);
    const rows = await page.locator('#layer-compare tbody tr').allTextContents();
    assert.match(rows[0], /CONV_2D.*40,000.*20,000.*0\.5×/);
    assert.match(rows[3], /AVERAGE_POOL_2D.*1×/);
    assert.match(await page.locator('#layer-compare-note').textContent(),
        new RegExp(`#${ids.modelM55Helium} / #${ids.modelM55}`));
    // Each side names the kernel set its runner ran.
    assert.deepEqual(await page.locator('#compare-jobs tbody .col-kernels').allTextContents(),
        ['reference', 'helium']);
    await page.locator('#layer-compare-metric').selectOption('instructions');
    assert.match((await page.locator('#layer-compare tbody tr').allTextContents())[0], /32,000.*16,000/);
    await assertNoPageOverflow(page, `compare ${size}`);
    await screenshot(page, `layers-compare-${size}`);
    await w.assertClean(`layers compare ${size}`);
    await page.close();
  });
}

test('fixture: a job without a per-layer profile shows no layer bars', fixtureOnly, async () => {
  const { page, w } = await openPage(sizes.desktop.context, `job.html?id=${ids.silicon}`);
  await page.locator('#ops-table tbody tr').first().waitFor();
  assert.equal(await page.locator('#layers').count(), 0);
  await w.assertClean('no layers');
  await page.close();
});
