// The escaping helpers of web/js/dom.js: what may become an attribute, a link or a class name.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cssToken, isForbiddenAttribute, safeHref } from '../../../web/js/dom.js';

test('event handler, style and srcdoc attributes are refused whatever their case', () => {
  for (const name of ['onclick', 'ONERROR', 'onLoad', 'style', 'Style', 'srcdoc', 'formaction']) {
    assert.ok(isForbiddenAttribute(name), name);
  }
  for (const name of ['href', 'title', 'aria-label', 'data-x', 'type', 'value']) {
    assert.ok(!isForbiddenAttribute(name), name);
  }
});

test('links to our pages, API paths, fragments and blob downloads pass', () => {
  for (const url of ['job.html?id=42', 'compare.html?jobs=1,2', 'index.html', '?offset=50', '#top',
    '/api/v1/jobs', 'blob:http://127.0.0.1:8080/0b5e']) {
    assert.equal(safeHref(url), url);
  }
});

test('script, data and foreign links become "#"', () => {
  for (const url of ['javascript:alert(1)', 'JavaScript:alert(1)', ' javascript:alert(1)', 'data:text/html,<b>',
    '//evil.example/x', '/\\evil.example', 'https://evil.example/', 'vbscript:x', 'job.html"onmouseover=x']) {
    assert.equal(safeHref(url), '#', url);
  }
});

test('server words become safe class name parts', () => {
  assert.equal(cssToken('timed_out'), 'timed_out');
  assert.equal(cssToken('Running'), 'running');
  assert.equal(cssToken('x" onclick="y'), 'x-onclick-y');
  assert.equal(cssToken('<script>'), 'script');
  assert.equal(cssToken(''), 'none');
  assert.equal(cssToken(undefined), 'none');
});
