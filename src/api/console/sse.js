// Server-Sent Events over fetch(): EventSource cannot send an
// Authorization header, so the console reads the stream itself.

import { authHeaders, notifyUnauthorized } from "./api.js";

// Incremental parser of the text/event-stream format (WHATWG HTML 9.2.6):
// feed it decoded text chunks, it calls onEvent({event, data, id}) per
// dispatched event. Comments (keep-alives) are ignored.
export class SseParser {
  constructor(onEvent) {
    this.onEvent = onEvent;
    this.buf = "";
    this.reset();
    this.lastId = null;
  }
  reset() {
    this.event = "";
    this.data = [];
    this.id = null;
  }
  push(chunk) {
    this.buf += chunk;
    let start = 0;
    for (;;) {
      const m = /\r\n|\r|\n/g;
      m.lastIndex = start;
      const hit = m.exec(this.buf);
      // A lone CR at the end may be the first half of CRLF: wait for more.
      if (!hit || (hit[0] === "\r" && hit.index === this.buf.length - 1)) break;
      this.line(this.buf.slice(start, hit.index));
      start = hit.index + hit[0].length;
    }
    this.buf = this.buf.slice(start);
  }
  line(line) {
    if (line === "") {
      if (this.data.length || this.event) {
        if (this.id !== null) this.lastId = this.id;
        this.onEvent({ event: this.event || "message", data: this.data.join("\n"), id: this.id });
      }
      this.reset();
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.event = value;
    else if (field === "data") this.data.push(value);
    else if (field === "id" && !value.includes("\0")) this.id = value;
  }
}

// Keep a stream open: reconnect with exponential backoff (0.5 s up to 10 s),
// sending Last-Event-ID so the server replays exactly the versions missed.
// Returns a handle whose close() ends it for good.
export function openStream(url, { onEvent, onState = () => {} }) {
  let closed = false;
  let lastId = null;
  let delay = 500;
  let controller = null;
  let timer = null;
  let gen = 0; // a restart abandons the attempt in flight

  async function connect() {
    if (closed) return;
    const mine = ++gen;
    controller = new AbortController();
    const headers = authHeaders({ Accept: "text/event-stream" });
    if (lastId !== null) headers["Last-Event-ID"] = lastId;
    try {
      const res = await fetch(url, { headers, signal: controller.signal, cache: "no-store" });
      if (res.status === 401) notifyUnauthorized();
      if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
      onState("open");
      const parser = new SseParser((ev) => {
        delay = 500; // data flows: the next drop starts the backoff afresh
        if (ev.id !== null) lastId = ev.id;
        let data = null;
        try {
          data = ev.data ? JSON.parse(ev.data) : null;
        } catch {
          data = ev.data;
        }
        onEvent(ev.event, data, ev.id);
      });
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        parser.push(decoder.decode(value, { stream: true }));
      }
    } catch {
      // fall through to the reconnect below
    }
    if (closed || mine !== gen) return;
    onState("reconnecting");
    timer = setTimeout(connect, delay);
    delay = Math.min(delay * 2, 10000);
  }

  connect();
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      if (controller) controller.abort();
    },
    // After the token changes, drop the connection and open it again now.
    restart() {
      if (closed) return;
      clearTimeout(timer);
      if (controller) controller.abort();
      delay = 500;
      gen++;
      timer = setTimeout(connect, 0);
    },
  };
}
