package ringd

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// sseEvent is one decoded Server-Sent Event.
type sseEvent struct {
	event string // "message" when the event named none
	id    string
	hasID bool
	data  string
}

// maxLine bounds one line of the stream: a snapshot of a 10,000-node ring
// is a few MB; a longer line is a broken or hostile server.
const maxLine = 64 << 20

// errMalformedStream is a stream that breaks the event-stream format.
var errMalformedStream = errors.New("malformed event stream")

// sseDecoder decodes the WHATWG event-stream format incrementally, as
// src/client/sse.rs does: `field: value` lines; CRLF, CR or LF end a
// line; `:` starts a comment; data lines join with LF; a blank line ends
// an event, which is dropped if it had no data. Written out rather than
// taken from a module: it is 80 lines, and the Go SSE libraries either
// own the HTTP request (no failover, no Last-Event-ID of ours) or are
// unmaintained.
type sseDecoder struct {
	line    []byte
	afterCR bool // the last chunk ended in CR, so a leading LF belongs to it
	event   string
	id      string
	hasID   bool
	data    []string
	hasData bool
}

// feed decodes chunk, appending every event it completes to out.
func (d *sseDecoder) feed(chunk []byte, out []sseEvent) ([]sseEvent, error) {
	if d.afterCR {
		d.afterCR = false
		chunk = bytes.TrimPrefix(chunk, []byte{'\n'})
	}
	for {
		pos := bytes.IndexAny(chunk, "\r\n")
		if pos < 0 {
			break
		}
		d.line = append(d.line, chunk[:pos]...)
		cr := chunk[pos] == '\r'
		chunk = chunk[pos+1:]
		if cr {
			if len(chunk) > 0 && chunk[0] == '\n' {
				chunk = chunk[1:]
			} else if len(chunk) == 0 {
				d.afterCR = true
			}
		}
		var err error
		if out, err = d.lineDone(d.line, out); err != nil {
			return out, err
		}
		d.line = d.line[:0]
	}
	d.line = append(d.line, chunk...)
	if len(d.line) > maxLine {
		return out, fmt.Errorf("%w: a line is over %d bytes", errMalformedStream, maxLine)
	}
	return out, nil
}

func (d *sseDecoder) lineDone(raw []byte, out []sseEvent) ([]sseEvent, error) {
	if len(raw) == 0 {
		if d.hasData {
			ev := sseEvent{event: d.event, id: d.id, hasID: d.hasID, data: strings.Join(d.data, "\n")}
			if ev.event == "" {
				ev.event = "message"
			}
			out = append(out, ev)
		}
		d.event, d.id, d.hasID, d.data, d.hasData = "", "", false, d.data[:0], false
		return out, nil
	}
	if !utf8.Valid(raw) {
		return out, fmt.Errorf("%w: invalid UTF-8", errMalformedStream)
	}
	line := string(raw)
	if strings.HasPrefix(line, ":") {
		return out, nil
	}
	field, value, found := strings.Cut(line, ":")
	if found {
		value = strings.TrimPrefix(value, " ")
	}
	switch field {
	case "event":
		d.event = value
	case "id":
		if !strings.ContainsRune(value, 0) {
			d.id, d.hasID = value, true
		}
	case "data":
		d.data, d.hasData = append(d.data, value), true
	}
	return out, nil
}
