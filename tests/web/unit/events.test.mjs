// The reconnecting event-stream client, with fetch, sleep and timers faked: no server, no waits.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { connectEvents, reconnectDelay } from '../../../web/js/events.js';

// A response whose body the test writes to and closes.
function streamResponse(status = 200, type = 'text/event-stream') {
  let controller;
  const body = new ReadableStream({ start(c) { controller = c; } });
  const enc = new TextEncoder();
  return {
    response: new Response(body, { status, headers: { 'content-type': type } }),
    write: (text) => controller.enqueue(enc.encode(text)),
    close: () => controller.close(),
    // What a real fetch does to the body when its signal aborts.
    abort: () => controller.error(new DOMException('aborted', 'AbortError')),
  };
}

// A fetch that hands out queued responses and records each request.
function fakeFetch() {
  const requests = [];
  const queue = [];
  const waiting = [];
  const fetch = (url, init) => {
    requests.push({ url, headers: init.headers, signal: init.signal });
    const next = queue.shift();
    const make = (r) => {
      if (r instanceof Error) return Promise.reject(r);
      init.signal.addEventListener('abort', () => r.abort && r.abort());
      return Promise.resolve(r.response);
    };
    if (next) return make(next);
    return new Promise((resolve, reject) => {
      // Like fetch: aborting before the response arrives rejects.
      init.signal.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')));
      waiting.push((r) => make(r).then(resolve, reject));
    });
  };
  return {
    fetch,
    requests,
    respond(r) {
      const w = waiting.shift();
      if (w) w(r);
      else queue.push(r);
    },
  };
}

// Resolves once cond() is true, checking after each turn of the event loop (no timers).
async function until(cond) {
  for (let i = 0; i < 1000; i++) {
    if (cond()) return;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error('condition never became true');
}

function harness(options = {}) {
  const f = fakeFetch();
  const events = [];
  const statuses = [];
  const sleeps = [];
  let opens = 0;
  const timers = [];
  const client = connectEvents({
    url: 'api/v1/events',
    headers: options.headers || (() => ({ Authorization: 'Bearer t' })),
    fetch: f.fetch,
    onEvent: (e) => events.push(e),
    onOpen: () => { opens += 1; },
    onStatus: (s, d) => statuses.push(d === undefined ? s : `${s}:${d}`),
    sleep: async (ms) => { sleeps.push(ms); },
    setTimer: (fn, ms) => { const t = { fn, ms, live: true }; timers.push(t); return t; },
    clearTimer: (t) => { t.live = false; },
  });
  return { f, events, statuses, sleeps, timers, client, opens: () => opens };
}

test('events are delivered and each connection calls onOpen', async () => {
  const h = harness();
  const s = streamResponse();
  h.f.respond(s);
  s.write('event: job\ndata: {"id":1}\n\n');
  await until(() => h.events.length === 1);
  assert.equal(h.events[0].type, 'job');
  assert.equal(h.opens(), 1);
  assert.equal(h.f.requests[0].headers.Authorization, 'Bearer t');
  assert.equal(h.f.requests[0].headers.Accept, 'text/event-stream');
  await h.client.close();
  assert.equal(h.statuses.at(-1), 'closed');
});

test('a stream that ends is reconnected after the server\'s retry delay, with Last-Event-ID', async () => {
  const h = harness();
  const first = streamResponse();
  h.f.respond(first);
  first.write('retry: 2500\nid: 17\nevent: job\ndata: {}\n\n');
  first.close();
  await until(() => h.f.requests.length === 2);
  assert.deepEqual(h.sleeps, [2500]);
  assert.equal(h.f.requests[1].headers['Last-Event-ID'], '17');
  const second = streamResponse();
  h.f.respond(second);
  await until(() => h.opens() === 2);
  await h.client.close();
});

test('failed connections back off exponentially, capped, and the count resets once connected', async () => {
  assert.deepEqual([0, 1, 2, 3, 10].map((n) => reconnectDelay(1000, n)), [1000, 2000, 4000, 8000, 30000]);
  const h = harness();
  h.f.respond(new TypeError('network down'));
  h.f.respond(streamResponse(502, 'application/json'));
  h.f.respond(new TypeError('network down'));
  await until(() => h.f.requests.length === 4);
  assert.deepEqual(h.sleeps, [1000, 2000, 4000]);
  const ok = streamResponse();
  h.f.respond(ok);
  await until(() => h.opens() === 1);
  ok.close();
  await until(() => h.f.requests.length === 5);
  assert.deepEqual(h.sleeps, [1000, 2000, 4000, 1000]);
  await h.client.close();
});

test('a rejected token stops reconnecting until restart(), which sends the new token', async () => {
  let token = 'old';
  const h = harness({ headers: () => ({ Authorization: `Bearer ${token}` }) });
  h.f.respond(streamResponse(401, 'application/json'));
  await until(() => h.statuses.includes('unauthorized:401'));
  await new Promise((r) => setImmediate(r));
  assert.equal(h.f.requests.length, 1);
  assert.deepEqual(h.sleeps, []);
  token = 'new';
  h.client.restart();
  await until(() => h.f.requests.length === 2);
  assert.equal(h.f.requests[1].headers.Authorization, 'Bearer new');
  await h.client.close();
});

test('a stream silent for longer than the idle timeout is dropped and reconnected', async () => {
  const h = harness();
  const s = streamResponse();
  let aborted = false;
  const realAbort = s.abort;
  s.abort = () => { aborted = true; realAbort(); };
  h.f.respond(s);
  await until(() => h.opens() === 1);
  const idle = h.timers.filter((t) => t.live);
  assert.equal(idle.length, 1);
  assert.equal(idle[0].ms, 45_000);
  idle[0].fn();  // the timeout fires
  await until(() => h.f.requests.length === 2);
  assert.ok(aborted);
  await h.client.close();
});

test('every chunk re-arms the idle timer', async () => {
  const h = harness();
  const s = streamResponse();
  h.f.respond(s);
  await until(() => h.opens() === 1);
  assert.equal(h.timers.length, 1);  // armed when connecting
  s.write(': keep-alive\n\n');
  await until(() => h.timers.length === 2);
  assert.deepEqual(h.timers.map((t) => t.live), [false, true]);
  await h.client.close();
});

test('restart() while connected reconnects at once', async () => {
  const h = harness();
  const s = streamResponse();
  h.f.respond(s);
  await until(() => h.opens() === 1);
  h.client.restart();
  await until(() => h.f.requests.length === 2);
  assert.deepEqual(h.sleeps, []);
  await h.client.close();
});

test('close() during a connection ends the loop without reconnecting', async () => {
  const h = harness();
  const s = streamResponse();
  h.f.respond(s);
  await until(() => h.opens() === 1);
  await h.client.close();
  assert.equal(h.f.requests.length, 1);
  assert.equal(h.statuses.at(-1), 'closed');
});
