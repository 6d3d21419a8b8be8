// Browser tests of the layout at desktop (1280 px) and phone (390 px) width: the history and the
// statistics tables fit without scrolling sideways (a phone shows the columns chosen for it), plots
// carry no empty legends, and the per-op share reads as a percentage. Screenshots in test-output/.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DESKTOP, FIXTURE, PHONE, fixtureControl, launch, openPage, saveTokenThroughUi, screenshot } from './harness.mjs';

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

// How far the table's wrapper would scroll sideways (0: the table fits).
function overflowOf(page, table) {
  return page.evaluate((sel) => {
    const wrap = document.querySelector(sel).closest('.table-wrap');
    return wrap.scrollWidth - wrap.clientWidth;
  }, table);
}

for (const size of ['desktop', 'phone']) {
  test(`${size}: the history table fits the screen`, fixtureOnly, async () => {
    const { page, w } = await openPage(sizes[size].context, 'index.html');
    await page.locator('#jobs-table tbody tr').nth(5).waitFor();
    await screenshot(page, `layout-history-${size}`);
    assert.ok(await overflowOf(page, '#jobs-table') <= 1, `history scrolls sideways by ${await overflowOf(page, '#jobs-table')} px`);
    if (size === 'phone') {
      assert.equal(await page.locator('#jobs-table tbody tr').first().locator('.col-user').isVisible(), false);
      assert.ok(await page.locator('#jobs-table tbody tr').first().locator('.col-state').isVisible());
    }
    await w.assertClean(`history ${size}`);
    await page.close();
  });

  test(`${size}: the statistics table fits, plots have no empty legend, per-op share is a percentage`, fixtureOnly, async () => {
    const { page, w } = await openPage(sizes[size].context, `job.html?id=${ids.silicon}`);
    await page.locator('#cases-table tbody tr').first().waitFor();
    await page.locator('#plot-line canvas').waitFor();
    await screenshot(page, `layout-job-${size}`);
    assert.ok(await overflowOf(page, '#cases-table') <= 1, `statistics scroll sideways by ${await overflowOf(page, '#cases-table')} px`);
    assert.equal(await page.locator('.u-legend').count(), 0, 'no legend of "--" values');
    const shares = await page.locator('#ops-table tbody tr td:last-child').allTextContents();
    assert.deepEqual(shares, ['71 %', '20 %', '9 %']);
    if (size === 'phone') {
      assert.ok(await page.locator('#cases-table tbody tr').first().locator('.stat-median').isVisible());
      assert.equal(await page.locator('#cases-table tbody tr').first().locator('.stat-stddev').isVisible(), false);
    }
    await w.assertClean(`job ${size}`);
    await page.close();
  });
}
