// The event-stream decoder, fed as a fetch body arrives: in pieces that
// split lines, CRLF pairs and UTF-8 sequences anywhere.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SseDecoder, SseFormatError } from '../../src/client/sse.js';

/**
 * Decodes text cut into pieces of size n.
 * @param {Uint8Array} bytes
 * @param {number} n
 */
function decode(bytes, n) {
  const d = new SseDecoder();
  /** @type {import("../../src/client/sse.js").SseEvent[]} */
  const out = [];
  for (let i = 0; i < bytes.length; i += n) d.feed(bytes.subarray(i, i + n), (e) => out.push(e));
  return out;
}

const stream =
  ': a comment\r\n' +
  'event: snapshot\r\nid: 7\r\ndata: {"a":\r\ndata:1}\r\n\r\n' +
  'event: keepalive\rdata: ünïcode\r\r' +
  'data\n\n' + // a field without a colon: empty data
  'id: 9\nevent: deleted\n\n' + // no data: dropped
  'retry: 5\ndata:  two spaces\n\n';

test('events are the same however the bytes are cut', () => {
  const bytes = new TextEncoder().encode(stream);
  const want = [
    { event: 'snapshot', id: '7', data: '{"a":\n1}' },
    { event: 'keepalive', id: undefined, data: 'ünïcode' },
    { event: 'message', id: undefined, data: '' },
    { event: 'message', id: undefined, data: ' two spaces' },
  ];
  for (const n of [1, 2, 3, 5, 7, bytes.length]) {
    assert.deepEqual(decode(bytes, n), want, `pieces of ${n} bytes`);
  }
});

test('a line that is not UTF-8 is an error after the events before it', () => {
  const d = new SseDecoder();
  const head = new TextEncoder().encode('data: ok\n\ndata: ');
  /** @type {string[]} */
  const got = [];
  const bad = new Uint8Array([...head, 0xff, 0xfe, 0x0a, 0x0a]);
  assert.throws(() => d.feed(bad, (e) => got.push(e.data)), SseFormatError);
  assert.deepEqual(got, ['ok']);
});

test('an id with NUL is ignored', () => {
  const out = decode(new TextEncoder().encode('id: 1\0\ndata: x\n\n'), 4);
  assert.deepEqual(out, [{ event: 'message', id: undefined, data: 'x' }]);
});
