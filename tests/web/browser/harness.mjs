// What the browser tests share: where the page is, the token, Chromium (Debian's, driven by
// playwright-core from web/node_modules), page watchers for dialogs, errors and CSP violations,
// the API for finding test subjects, and screenshots.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const require = createRequire(join(REPO, 'web', 'package.json'));
const { chromium } = require('playwright-core');

if (!process.env.MCULAB_WEB_URL) {
  throw new Error('MCULAB_WEB_URL is not set: run tests/web/run.sh, which starts the fixture server, ' +
      'or point it at a running mculab-server (e.g. http://127.0.0.1:8080/)');
}
export const BASE = process.env.MCULAB_WEB_URL.endsWith('/') ? process.env.MCULAB_WEB_URL : `${process.env.MCULAB_WEB_URL}/`;
export const TOKEN = process.env.MCULAB_TOKEN || '';
// Set by run.sh when it started fixture_server.mjs: the tests that need fixture controls run.
export const FIXTURE = process.env.MCULAB_FIXTURE === '1';
export const OUT = join(resolve(REPO, process.env.MCULAB_TEST_OUTPUT || 'test-output'), 'web');
export const XSS_LABEL = '<img src=x onerror=alert(1)>';
export const CHROMIUM = process.env.MCULAB_CHROMIUM || '/usr/bin/chromium';
export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

// A Chromium with a fresh profile directory (removed on close). Playwright refuses
// --user-data-dir in args, so the fresh profile is given the way it accepts: a persistent context.
export async function launch(viewport, { mobile = false } = {}) {
  const profile = mkdtempSync(join(tmpdir(), 'mculab-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport,
    deviceScaleFactor: 1,
    isMobile: mobile,
    hasTouch: mobile,
    acceptDownloads: true,
  });
  await context.addInitScript(() => {
    window.__cspViolations = [];
    document.addEventListener('securitypolicyviolation', (e) => {
      window.__cspViolations.push(`${e.violatedDirective} blocked ${e.blockedURI || 'inline'} (${e.sourceFile}:${e.lineNumber})`);
    });
  });
  context.setDefaultTimeout(15_000);
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

// Every problem a page shows: dialogs (a script ran that should not), uncaught errors, console
// errors (a CSP refusal is one), CSP violation events.
export function watch(page) {
  const problems = [];
  const requests = [];
  page.on('dialog', (d) => {
    problems.push(`dialog "${d.type()}": ${d.message()}`);
    d.dismiss().catch(() => {});
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' || /Content.Security.Policy/i.test(m.text())) problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('request', (r) => requests.push(r.url()));
  return {
    problems,
    requests,
    async assertClean(what) {
      const csp = await page.evaluate(() => window.__cspViolations || []).catch(() => []);
      assert.deepEqual([...problems, ...csp.map((v) => `CSP: ${v}`)], [], `${what}: the page reported problems`);
    },
  };
}

// Opens a page with the token saved through the page's own token box.
export async function openPage(context, path) {
  const page = await context.newPage();
  const w = watch(page);
  await page.goto(new URL(path, BASE).href);
  return { page, w };
}

export async function saveTokenThroughUi(context) {
  if (!TOKEN) return;
  const page = await context.newPage();
  await page.goto(new URL('boards.html', BASE).href);
  await page.locator('.token-box summary').click();
  await page.locator('#token-input').fill(TOKEN);
  await page.locator('#token-form button[type=submit]').click();
  await page.locator('.token-box summary', { hasText: 'Token ✓' }).waitFor();
  await page.close();
}

// GET api/v1/<path> from node, with the token.
export async function api(path) {
  const res = await fetch(new URL(`api/v1/${path}`, BASE), { headers: TOKEN ? { Authorization: `Bearer ${TOKEN}` } : {} });
  const body = await res.json();
  assert.ok(res.ok, `GET ${path}: HTTP ${res.status} ${JSON.stringify(body)}`);
  return body;
}

// GET api/v1/<path> from node, with the token: the body as text (a CSV file).
export async function apiText(path) {
  const res = await fetch(new URL(`api/v1/${path}`, BASE), { headers: TOKEN ? { Authorization: `Bearer ${TOKEN}` } : {} });
  const body = await res.text();
  assert.ok(res.ok, `GET ${path}: HTTP ${res.status} ${body}`);
  return body;
}

export async function fixtureControl(path) {
  const res = await fetch(new URL(`__fixture/${path}`, BASE), {
    method: path === 'ids' ? 'GET' : 'POST',
    headers: TOKEN ? { Authorization: `Bearer ${TOKEN}` } : {},
  });
  assert.ok(res.ok, `fixture control ${path}: HTTP ${res.status}`);
  return res.json();
}

export async function screenshot(page, name) {
  mkdirSync(OUT, { recursive: true });
  const file = join(OUT, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

// How many pixels of the canvas are drawn (alpha > 0), read in the page.
export async function drawnPixels(page, selector) {
  return page.evaluate((sel) => {
    const canvas = document.querySelector(sel);
    if (!canvas) return -1;
    const ctx = canvas.getContext('2d');
    const { data } = ctx.getImageData(0, 0, canvas.width, canvas.height);
    let n = 0;
    for (let i = 3; i < data.length; i += 4) if (data[i] > 0) n++;
    return n;
  }, selector);
}

// The page is no wider than the screen: wide tables scroll inside their wrapper instead.
export async function assertNoPageOverflow(page, what) {
  const { scroll, client } = await page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth,
  }));
  assert.ok(scroll <= client + 1, `${what}: page is ${scroll}px wide on a ${client}px screen`);
}
