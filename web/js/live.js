// One live connection to /api/v1/events per page, shared by whatever the page shows. Job and
// board events are parsed here; pages subscribe to the kinds they show and to reconnects (after
// which they refetch, since events may have been missed while disconnected).
import { authHeaders } from './api.js';
import { connectEvents } from './events.js';

const listeners = { job: new Set(), board: new Set(), samples: new Set() };
const reconnectListeners = new Set();
let connection = null;

export function onLive(type, fn) {
  listeners[type].add(fn);
  return () => listeners[type].delete(fn);
}

// fn() runs after every reconnection (not the first connection: the page just loaded).
export function onReconnect(fn) {
  reconnectListeners.add(fn);
  return () => reconnectListeners.delete(fn);
}

// url: the job page asks for api/v1/events?job=ID, which also carries that job's `samples`.
export function startLive(setStatus, { url = 'api/v1/events' } = {}) {
  if (connection) return connection;
  let opened = 0;
  connection = connectEvents({
    url,
    headers: authHeaders,
    onStatus: setStatus,
    onOpen: () => {
      opened += 1;
      if (opened > 1) for (const fn of reconnectListeners) fn();
    },
    onEvent: (ev) => {
      const set = listeners[ev.type];
      if (!set || set.size === 0) return;
      let data;
      try {
        data = JSON.parse(ev.data);
      } catch {
        return;  // a malformed event is dropped; the next refetch corrects the view
      }
      for (const fn of set) fn(data);
    },
  });
  window.addEventListener('mculab:token', () => connection.restart());
  window.addEventListener('pagehide', () => connection.close());
  // Back/forward cache: a restored page has a closed connection and stale data; load it afresh.
  window.addEventListener('pageshow', (e) => { if (e.persisted) location.reload(); });
  return connection;
}
