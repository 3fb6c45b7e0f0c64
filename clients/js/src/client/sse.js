// An incremental decoder of the WHATWG event-stream format, fed the bytes
// of a fetch body. Written out rather than using EventSource: an
// EventSource cannot send a bearer token, cannot fail over across URLs,
// reconnects on its own schedule and does not exist in Node.js 18.

/**
 * @typedef {object} SseEvent
 * @property {string} event "message" when the event named none
 * @property {string | undefined} id
 * @property {string} data
 */

/** A line longer than this is a broken or hostile server (a snapshot of a
 * 10,000-node ring is a few MB). */
export const MAX_LINE = 64 << 20;

const CR = 0x0d;
const LF = 0x0a;

/** The stream breaks the format: invalid UTF-8 or an overlong line. */
export class SseFormatError extends Error {}

export class SseDecoder {
  /** @type {Uint8Array[]} the pieces of the current line */
  #line = [];
  #lineLength = 0;
  /** the last chunk ended in CR, so a leading LF belongs to it */
  #afterCR = false;
  #event = '';
  /** @type {string | undefined} */
  #id;
  /** @type {string[]} */
  #data = [];
  #hasData = false;
  // fatal: a line that is not UTF-8 is an error, not U+FFFD, as in the
  // Go and Rust clients.
  #utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

  /**
   * Decodes chunk, passing each event it completes to onEvent. On a
   * fault it throws an SseFormatError, after passing on the events
   * completed before it.
   * @param {Uint8Array} chunk
   * @param {(event: SseEvent) => void} onEvent
   */
  feed(chunk, onEvent) {
    let start = 0;
    if (this.#afterCR) {
      this.#afterCR = false;
      if (chunk.length > 0 && chunk[0] === LF) start = 1;
    }
    for (let i = start; i < chunk.length; i++) {
      const b = chunk[i];
      if (b !== CR && b !== LF) continue;
      this.#append(chunk.subarray(start, i));
      if (b === CR) {
        if (i + 1 < chunk.length) {
          if (chunk[i + 1] === LF) i++;
        } else {
          this.#afterCR = true;
        }
      }
      start = i + 1;
      this.#lineDone(onEvent);
    }
    this.#append(chunk.subarray(start));
    if (this.#lineLength > MAX_LINE) {
      throw new SseFormatError(`a line is over ${MAX_LINE} bytes`);
    }
  }

  /** @param {Uint8Array} piece */
  #append(piece) {
    if (piece.length === 0) return;
    // Copied: the reader may reuse the chunk's buffer.
    this.#line.push(piece.slice());
    this.#lineLength += piece.length;
  }

  /** @param {(event: SseEvent) => void} onEvent */
  #lineDone(onEvent) {
    const bytes = joinBytes(this.#line, this.#lineLength);
    this.#line = [];
    this.#lineLength = 0;
    if (bytes.length === 0) {
      if (this.#hasData) {
        const event = this.#event === '' ? 'message' : this.#event;
        const ev = { event, id: this.#id, data: this.#data.join('\n') };
        this.#event = '';
        this.#id = undefined;
        this.#data = [];
        this.#hasData = false;
        onEvent(ev);
        return;
      }
      this.#event = '';
      this.#id = undefined;
      return;
    }
    let line;
    try {
      line = this.#utf8.decode(bytes);
    } catch {
      throw new SseFormatError('invalid UTF-8');
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.#event = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.#id = value;
        break;
      case 'data':
        this.#data.push(value);
        this.#hasData = true;
        break;
      default:
      // retry and unknown fields: ignored, as the format says
    }
  }
}

/**
 * @param {Uint8Array[]} pieces
 * @param {number} length
 */
export function joinBytes(pieces, length) {
  if (pieces.length === 1) return pieces[0];
  const out = new Uint8Array(length);
  let at = 0;
  for (const p of pieces) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
