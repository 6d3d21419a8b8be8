// The text/event-stream parser, one test per way the bytes can arrive.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SseParser } from '../../../web/js/sse.js';

function parse(chunks, { end = true } = {}) {
  const events = [];
  const retries = [];
  const comments = [];
  const p = new SseParser({ onEvent: (e) => events.push(e), onRetry: (ms) => retries.push(ms), onComment: (c) => comments.push(c) });
  for (const c of chunks) p.push(c);
  if (end) p.end();
  return { events, retries, comments };
}

const JOB = 'event: job\ndata: {"id":42,"state":"running"}\n\n';

test('an event carries its type and data', () => {
  const { events } = parse([JOB]);
  assert.deepEqual(events, [{ type: 'job', data: '{"id":42,"state":"running"}', lastEventId: '' }]);
});

test('an event without a type is a "message"', () => {
  assert.equal(parse(['data: x\n\n']).events[0].type, 'message');
});

test('several data lines are joined with newlines', () => {
  assert.equal(parse(['data: a\ndata: b\ndata:\n\n']).events[0].data, 'a\nb\n');
});

test('comment lines (the keep-alive) produce no event', () => {
  const { events, comments } = parse([': keep-alive\n\n', JOB]);
  assert.equal(events.length, 1);
  assert.deepEqual(comments, [' keep-alive']);
});

test('the same events come out however the stream is split, down to single bytes', () => {
  const text = `${JOB}event: board\ndata: {"name":"an547-0"}\n\n`;
  const whole = parse([text]).events;
  const bytes = new TextEncoder().encode(text);
  const oneByOne = parse([...bytes].map((b) => Uint8Array.of(b))).events;
  assert.equal(whole.length, 2);
  assert.deepEqual(oneByOne, whole);
});

test('a UTF-8 character split between chunks is decoded whole', () => {
  const bytes = new TextEncoder().encode('data: µs ✓\n\n');
  const { events } = parse([bytes.slice(0, 7), bytes.slice(7, 11), bytes.slice(11)]);
  assert.equal(events[0].data, 'µs ✓');
});

test('CRLF split between chunks is one line end, not two', () => {
  const { events } = parse(['data: a\r', '\ndata: b\r\n\r\n']);
  assert.deepEqual(events.map((e) => e.data), ['a\nb']);
});

test('CR alone ends lines too', () => {
  const { events } = parse(['event: job\rdata: 1\r\rdata: 2\r\r']);
  assert.deepEqual(events.map((e) => [e.type, e.data]), [['job', '1'], ['message', '2']]);
});

test('a CR at the very end of the stream still ends its line', () => {
  const p = [];
  const parser = new SseParser({ onEvent: (e) => p.push(e) });
  parser.push('data: x\r\r');
  parser.end();
  assert.equal(p.length, 1);
});

test('a leading byte order mark is dropped', () => {
  assert.equal(parse(['\ufeffdata: x\n\n']).events[0].data, 'x');
});

test('only one space after the colon is removed', () => {
  assert.equal(parse(['data:  two spaces\n\n']).events[0].data, ' two spaces');
  assert.equal(parse(['data:none\n\n']).events[0].data, 'none');
});

test('a field name without a colon has an empty value', () => {
  assert.equal(parse(['data\n\n']).events[0].data, '');
});

test('an event never ended by a blank line is dropped at the end of the stream', () => {
  const { events } = parse([JOB, 'event: job\ndata: {"id":43}\n']);
  assert.equal(events.length, 1);
});

test('a blank line without data dispatches nothing and resets the type', () => {
  const { events } = parse(['event: job\n\ndata: x\n\n']);
  assert.deepEqual(events.map((e) => e.type), ['message']);
});

test('retry accepts digits only', () => {
  assert.deepEqual(parse(['retry: 2500\n\nretry: 1.5\n\nretry: x\n\n']).retries, [2500]);
});

test('the last event id persists across events and ignores ids containing NUL', () => {
  const { events } = parse(['id: 7\ndata: a\n\ndata: b\n\nid: 8\0\ndata: c\n\n']);
  assert.deepEqual(events.map((e) => e.lastEventId), ['7', '7', '7']);
});

test('unknown fields are ignored', () => {
  assert.deepEqual(parse(['foo: bar\ndata: x\n\n']).events.map((e) => e.data), ['x']);
});

test('data that looks like HTML stays plain text', () => {
  const data = '{"label":"<img src=x onerror=alert(1)>"}';
  assert.equal(parse([`event: job\ndata: ${data}\n\n`]).events[0].data, data);
});
