// Building the page's DOM safely. Every piece of data reaches the page as a text node or an
// attribute value set through the DOM; nothing is ever parsed as HTML (no innerHTML anywhere:
// tests/web/unit/no_html_sinks.test.mjs checks the sources). Styles come from css/app.css or the
// CSSOM, never from style="" (the Content-Security-Policy forbids inline styles).

import { measuredKind, measuredLabel } from './format.js';

// Attributes h() refuses: event handlers and inline styles would bypass both rules above.
export function isForbiddenAttribute(name) {
  const n = String(name).toLowerCase();
  return n.startsWith('on') || n === 'style' || n === 'srcdoc' || n === 'formaction';
}

// Links the page builds: our own pages and API paths, fragments, query strings, blob: downloads.
// Anything else (javascript:, data:, other origins) becomes "#".
export function safeHref(url) {
  const s = String(url);
  if (/^blob:/.test(s)) return s;
  if (/^[?#]/.test(s)) return s;
  if (/^\/(?![/\\])/.test(s)) return s;
  if (/^[a-z0-9_-]+\.html(?:[?#].*)?$/i.test(s)) return s;
  if (/^(?:\.\/)?[a-z0-9_-]+(?:\/[a-z0-9_.-]+)*(?:[?#].*)?$/i.test(s) && !s.includes(':')) return s;
  return '#';
}

// A server-supplied word (a state, a health) made safe to use inside a class name.
export function cssToken(s) {
  const t = String(s || '').toLowerCase().replace(/[^a-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '');
  return t || 'none';
}

// h('a', {href: 'job.html?id=1', class: 'x'}, 'text', child, [more]) -> Element.
// props: class, dataset {..}, on {event: fn}, and attributes; `text` is a shortcut for one text
// child. Children: strings and numbers become text nodes; null/undefined/false are skipped.
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') {
      el.className = Array.isArray(value) ? value.filter(Boolean).join(' ') : value;
    } else if (key === 'dataset') {
      for (const [k, v] of Object.entries(value)) el.dataset[k] = String(v);
    } else if (key === 'on') {
      for (const [event, fn] of Object.entries(value)) el.addEventListener(event, fn);
    } else if (key === 'text') {
      el.textContent = String(value);
    } else if (key === 'href') {
      el.setAttribute('href', safeHref(value));
    } else if (['value', 'checked', 'selected', 'disabled', 'hidden', 'open'].includes(key)) {
      el[key] = value;
    } else {
      if (isForbiddenAttribute(key)) throw new Error(`h(): attribute ${key} is not allowed`);
      el.setAttribute(key, value === true ? '' : String(value));
    }
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

// Replaces all children of el.
export function replaceChildren(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

// A table inside a horizontally scrolling wrapper (narrow screens scroll, the page does not).
export function scrollTable(table, label) {
  return h('div', { class: 'table-wrap', role: 'region', 'aria-label': label, tabindex: '0' },
      table);
}

// A message box: kind 'error' | 'warning' | 'info'.
export function messageBox(kind, ...children) {
  return h('div', { class: ['message', `message-${kind}`], role: kind === 'error' ? 'alert' : 'status' },
      ...children);
}

// A badge for a job state / board state / health: text always, colour from the class.
export function badge(kind, value) {
  return h('span', { class: ['badge', `${kind}-${cssToken(value)}`] }, String(value || '-'));
}

const MEASURED_TITLE = {
  emulated: 'Emulated: instruction counts from QEMU, not silicon timing',
  host: 'Host: the runner as a native Linux process, timed by the host clock; not an MCU',
  silicon: 'Measured on real hardware',
};

// The emulated / host / silicon badge of an API object (its `measured`), a kind or a boolean.
export function measuredBadge(x) {
  const kind = measuredKind(x);
  return h('span', {
    class: ['badge', 'measured', `measured-${kind}`], title: MEASURED_TITLE[kind],
  }, measuredLabel(kind));
}

// A click-to-download link for text made in the page (JSON) or fetched from the server (CSV):
// makeText returns the text or a promise of it; when the promise fails, onError gets the error.
export function downloadLink(label, fileName, mimeType, makeText, onError = () => {}) {
  const a = h('a', { class: 'button', href: '#', download: fileName }, label);
  a.addEventListener('click', (e) => {
    e.preventDefault();
    Promise.resolve().then(makeText).then((text) => {
      const url = URL.createObjectURL(new Blob([text], { type: mimeType }));
      const save = h('a', { href: url, download: fileName, hidden: true });
      document.body.append(save);
      save.click();
      save.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
    }, onError);
  });
  return a;
}
