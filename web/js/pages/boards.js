// Boards page: every board with its scheduling state, health, holder and lease, current job,
// queue and tags; rows update live from board events.
import { apiGet, describeApiError } from '../api.js';
import { badge, h, measuredBadge, messageBox, replaceChildren, scrollTable } from '../dom.js';
import { formatCount, formatRelative, formatTime } from '../format.js';
import { initLayout, setTitle } from '../layout.js';
import { onLive, onReconnect, startLive } from '../live.js';

const layout = initLayout('boards');
setTitle('boards');
startLive(layout.setLive);

const messages = h('div', { id: 'boards-message' });
const holder = h('div', { id: 'boards-holder' });
const summary = h('p', { class: 'summary', id: 'boards-summary' });
replaceChildren(layout.main, h('h1', {}, 'Boards'), summary, messages, holder);

let boards = [];
const rows = new Map();  // name -> tr

// State and health come right after the name: what a phone shows before scrolling sideways.
const HEADINGS = ['board', 'state', 'health', 'holder', 'lease ends', 'current job', 'queue', 'measured',
  'kind', 'agent', 'tags', 'note'];

function tags(t) {
  const entries = Object.entries(t || {});
  if (entries.length === 0) return '-';
  return h('ul', { class: 'tags' }, entries.map(([k, v]) => h('li', { class: 'chip' }, `${k}=${v}`)));
}

function lease(b) {
  if (!(b.lease_until_ms > 0)) return '-';
  return [formatRelative(b.lease_until_ms, Date.now()), h('span', { class: 'sub nowrap' }, formatTime(b.lease_until_ms))];
}

function boardRow(b) {
  return h('tr', { dataset: { board: b.name } },
      h('th', { scope: 'row', class: 'col-name' }, b.name),
      h('td', {}, badge('board-state', b.state)),
      h('td', {}, badge('health', b.health)),
      h('td', {}, b.holder || '-'),
      h('td', {}, lease(b)),
      h('td', {}, b.current_job > 0 ? h('a', { href: `job.html?id=${b.current_job}` }, `#${b.current_job}`) : '-'),
      h('td', { class: 'num' }, formatCount(b.queue_length || 0)),
      h('td', {}, measuredBadge(b)),
      h('td', { class: 'col-kind' }, b.kind || '-'),
      h('td', {}, b.agent || '-'),
      h('td', {}, tags(b.tags)),
      h('td', { class: 'col-note' }, b.note || ''));
}

function render() {
  rows.clear();
  const counts = {};
  for (const b of boards) counts[b.state] = (counts[b.state] || 0) + 1;
  summary.textContent = `${boards.length} board${boards.length === 1 ? '' : 's'}` +
      (boards.length ? `: ${Object.entries(counts).map(([s, n]) => `${n} ${s}`).join(', ')}` : '');
  const body = h('tbody', {});
  for (const b of boards) {
    const tr = boardRow(b);
    rows.set(b.name, tr);
    body.append(tr);
  }
  const table = h('table', { class: 'data boards', id: 'boards-table' },
      h('thead', {}, h('tr', {}, HEADINGS.map((t) => h('th', { scope: 'col' }, t)))), body);
  replaceChildren(holder, boards.length ? scrollTable(table, 'boards') : messageBox('info', 'No boards are registered.'));
}

async function load() {
  try {
    const res = await apiGet('boards');
    boards = res.boards;
    replaceChildren(messages);
    render();
  } catch (err) {
    replaceChildren(messages, messageBox('error', describeApiError(err)));
  }
}

onLive('board', (b) => {
  const i = boards.findIndex((x) => x.name === b.name);
  if (i < 0) {
    load();  // a new board: the order and summary come from the server
    return;
  }
  boards[i] = b;
  render();
});
onReconnect(() => load());
window.addEventListener('mculab:token', () => load());
// Lease times are shown relative to now: keep "in 12 min" true.
setInterval(() => { if (boards.length) render(); }, 30_000);

load();
