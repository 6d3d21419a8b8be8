// The page's sources never turn data into markup and never need 'unsafe-inline': checked on the
// files themselves, so a later edit that adds innerHTML or an inline handler fails here.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const WEB = fileURLToPath(new URL('../../../web/', import.meta.url));

function files(dir, ext) {
  const out = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'vendor' || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...files(p, ext));
    else if (name.endsWith(ext)) out.push(p);
  }
  return out;
}

const scripts = files(join(WEB, 'js'), '.js');
const pages = files(WEB, '.html');

test('the sources are found', () => {
  assert.ok(scripts.length >= 10, scripts.join());
  assert.deepEqual(pages.map((p) => p.slice(WEB.length)).sort(), ['boards.html', 'compare.html', 'index.html', 'job.html', 'trend.html']);
});

test('no script writes HTML, evaluates strings or sets inline styles as attributes', () => {
  const sinks = [/\.innerHTML\b/, /\.outerHTML\b/, /insertAdjacentHTML/, /document\.write/, /\beval\s*\(/,
    /new\s+Function\s*\(/, /setAttribute\(\s*['"]style['"]/, /setAttribute\(\s*['"]on/i, /createContextualFragment/,
    /DOMParser/, /\.srcdoc\b/, /setTimeout\(\s*['"`]/, /setInterval\(\s*['"`]/];
  for (const file of scripts) {
    const text = readFileSync(file, 'utf8');
    for (const re of sinks) assert.doesNotMatch(text, re, `${file} matches ${re}`);
  }
});

test('pages have no inline script, handler, style or external resource', () => {
  for (const file of pages) {
    const html = readFileSync(file, 'utf8');
    for (const m of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)) {
      assert.match(m[1], /\bsrc="[^"]+"/, `${file}: a <script> without src`);
      assert.equal(m[2].trim(), '', `${file}: inline script`);
    }
    assert.doesNotMatch(html, /\son[a-z]+\s*=/i, `${file}: inline event handler`);
    assert.doesNotMatch(html, /\sstyle\s*=/i, `${file}: style attribute`);
    assert.doesNotMatch(html, /<style\b/i, `${file}: <style> element`);
    assert.doesNotMatch(html, /(?:src|href)="(?:https?:)?\/\//i, `${file}: resource from another origin`);
  }
});

test('the stylesheet loads nothing from other origins', () => {
  for (const file of files(join(WEB, 'css'), '.css')) {
    assert.doesNotMatch(readFileSync(file, 'utf8'), /url\(|@import/, file);
  }
});
