// A Server-Sent Events client over fetch() (so it can send Authorization), with reconnects.
// Time and the network are injected (fetch, sleep, timers), so the reconnect behaviour is tested
// in node without a server or real waiting (tests/web/unit/events.test.mjs).
import { SseParser } from './sse.js';

export const DEFAULT_RETRY_MS = 1000;
export const MAX_RETRY_MS = 30_000;
// The server sends a comment every 15 s; silence for this long means the stream is dead even if
// the socket is not closed yet (a sleeping laptop, a proxy that swallowed the FIN).
export const IDLE_TIMEOUT_MS = 45_000;

// Delay before reconnect attempt `failures` (0 = the first retry after a drop).
export function reconnectDelay(retryMs, failures) {
  return Math.min(MAX_RETRY_MS, retryMs * 2 ** Math.min(failures, 10));
}

const realSleep = (ms, signal) => new Promise((resolve) => {
  const t = setTimeout(resolve, ms);
  signal.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
});

// Connects to `url` and keeps reconnecting until close(). Callbacks:
//   onEvent({type, data, lastEventId})  each event;
//   onOpen()                            each (re)connection: refetch state, events may be missed;
//   onStatus(status, detail)            'connecting' | 'open' | 'retrying' (detail: delay ms) |
//                                       'unauthorized' (detail: HTTP status; waits for restart()) |
//                                       'closed'.
// headers() is called before each connection (the token may have changed).
export function connectEvents({
  url,
  headers = () => ({}),
  onEvent = () => {},
  onOpen = () => {},
  onStatus = () => {},
  fetch: fetchImpl = globalThis.fetch.bind(globalThis),
  sleep = realSleep,
  setTimer = (fn, ms) => setTimeout(fn, ms),
  clearTimer = (t) => clearTimeout(t),
  idleTimeoutMs = IDLE_TIMEOUT_MS,
}) {
  let closed = false;
  let retryMs = DEFAULT_RETRY_MS;
  let failures = 0;
  let lastEventId = '';
  let current = null;  // AbortController of the live connection or the wait before it
  let wakeUnauthorized = null;
  let immediate = false;  // restart(): reconnect without waiting

  async function connectOnce() {
    const ctrl = new AbortController();
    current = ctrl;
    let idle = null;
    const arm = () => {
      if (idle !== null) clearTimer(idle);
      idle = setTimer(() => ctrl.abort(), idleTimeoutMs);
    };
    onStatus('connecting');
    try {
      const h = { Accept: 'text/event-stream', ...headers() };
      if (lastEventId) h['Last-Event-ID'] = lastEventId;
      arm();
      const res = await fetchImpl(url, { headers: h, signal: ctrl.signal, cache: 'no-store' });
      if (res.status === 401 || res.status === 403) {
        if (res.body) await res.body.cancel().catch(() => {});
        return { unauthorized: res.status };
      }
      const type = res.headers.get('content-type') || '';
      if (!res.ok || !type.startsWith('text/event-stream') || !res.body) {
        if (res.body) await res.body.cancel().catch(() => {});
        return { opened: false };
      }
      failures = 0;
      onStatus('open');
      onOpen();
      const parser = new SseParser({
        onEvent: (ev) => {
          lastEventId = ev.lastEventId;
          onEvent(ev);
        },
        onRetry: (ms) => { retryMs = ms; },
      });
      const reader = res.body.getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        arm();
        parser.push(value);
      }
      parser.end();
      return { opened: true };
    } catch {
      return { opened: false };  // network error, abort (close or idle timeout)
    } finally {
      if (idle !== null) clearTimer(idle);
    }
  }

  async function loop() {
    while (!closed) {
      const result = await connectOnce();
      if (closed) break;
      if (result.unauthorized) {
        onStatus('unauthorized', result.unauthorized);
        await new Promise((resolve) => { wakeUnauthorized = resolve; });
        wakeUnauthorized = null;
        failures = 0;
        continue;
      }
      if (immediate) {
        immediate = false;
        continue;
      }
      const delay = reconnectDelay(retryMs, failures);
      failures += 1;
      onStatus('retrying', delay);
      const wait = new AbortController();
      current = wait;
      await sleep(delay, wait.signal);
      immediate = false;
    }
    onStatus('closed');
  }

  const done = loop();
  return {
    // Stops for good; resolves when the loop has ended.
    close() {
      closed = true;
      if (current) current.abort();
      if (wakeUnauthorized) wakeUnauthorized();
      return done;
    },
    // Drops the current connection (or wait) and connects again now, e.g. after a new token.
    restart() {
      failures = 0;
      if (wakeUnauthorized) {
        wakeUnauthorized();
      } else {
        immediate = true;
        if (current) current.abort();
      }
    },
  };
}
