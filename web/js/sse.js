// An incremental parser for the text/event-stream format (WHATWG HTML §9.2 "Server-sent
// events"), for reading /api/v1/events through fetch(): EventSource cannot send the
// Authorization header. Pure: feed it chunks, it calls back with whole events.
//
// Contract: push() takes a string or a Uint8Array (UTF-8, split anywhere, even inside a
// character or between CR and LF); onEvent({type, data, lastEventId}) fires on each blank line
// that ends an event with data; onRetry(ms) on a valid "retry:" field. end() discards a
// trailing event that was never terminated, as the spec says.
export class SseParser {
  constructor({ onEvent, onRetry = () => {}, onComment = () => {} }) {
    this.onEvent = onEvent;
    this.onRetry = onRetry;
    this.onComment = onComment;
    this.decoder = new TextDecoder('utf-8');
    this.buffer = '';
    this.started = false;
    this.eventType = '';
    this.data = '';
    this.hasData = false;
    this.lastEventId = '';
  }

  push(chunk) {
    let text = typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    if (!this.started && text.length > 0) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    this.buffer += text;
    this.drain(false);
  }

  end() {
    const rest = this.decoder.decode();
    if (rest) this.buffer += rest;
    this.drain(true);
    // A line without its terminator and an event without its blank line are both dropped.
    this.buffer = '';
    this.resetEvent();
  }

  drain(atEnd) {
    let start = 0;
    const buf = this.buffer;
    for (;;) {
      let i = start;
      while (i < buf.length && buf[i] !== '\n' && buf[i] !== '\r') i++;
      if (i >= buf.length) break;
      if (buf[i] === '\r' && i + 1 >= buf.length && !atEnd) break;  // maybe CRLF split
      const line = buf.slice(start, i);
      start = buf[i] === '\r' && buf[i + 1] === '\n' ? i + 2 : i + 1;
      this.line(line);
    }
    this.buffer = buf.slice(start);
  }

  line(line) {
    if (line === '') {
      this.dispatch();
      return;
    }
    if (line[0] === ':') {
      this.onComment(line.slice(1));
      return;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value[0] === ' ') value = value.slice(1);
    switch (field) {
      case 'event':
        this.eventType = value;
        break;
      case 'data':
        this.data += `${value}\n`;
        this.hasData = true;
        break;
      case 'id':
        if (!value.includes('\0')) this.lastEventId = value;
        break;
      case 'retry':
        if (/^[0-9]+$/.test(value)) this.onRetry(parseInt(value, 10));
        break;
      default:
        break;  // unknown fields are ignored
    }
  }

  dispatch() {
    if (!this.hasData) {
      this.resetEvent();
      return;
    }
    const event = {
      type: this.eventType || 'message',
      data: this.data.slice(0, -1),
      lastEventId: this.lastEventId,
    };
    this.resetEvent();
    this.onEvent(event);
  }

  resetEvent() {
    this.eventType = '';
    this.data = '';
    this.hasData = false;
  }
}
