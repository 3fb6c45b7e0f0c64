package ringd

import (
	"errors"
	"reflect"
	"testing"

	"github.com/ringd/ringd/clients/go/placement"
)

// TestSSEEventsSurviveAnyChunkingAndLineEnding decodes one stream cut
// into pieces of every size, with CRLF, CR and LF line ends.
func TestSSEEventsSurviveAnyChunkingAndLineEnding(t *testing.T) {
	input := []byte(": hello\r\nevent: snapshot\r\nid: 7\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\nevent: keepalive\rdata: x\r\rdata:y\n\nevent: nothing\n\n")
	want := []sseEvent{
		{event: "snapshot", id: "7", hasID: true, data: "{\"a\":\n1}"},
		{event: "keepalive", data: "x"},
		{event: "message", data: "y"},
	}
	for piece := 1; piece <= len(input); piece++ {
		var d sseDecoder
		var got []sseEvent
		for i := 0; i < len(input); i += piece {
			var err error
			if got, err = d.feed(input[i:min(i+piece, len(input))], got); err != nil {
				t.Fatal(err)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("pieces of %d: %+v", piece, got)
		}
	}
}

// TestSSEInvalidUTF8IsAnError refuses a line that is not UTF-8.
func TestSSEInvalidUTF8IsAnError(t *testing.T) {
	var d sseDecoder
	if _, err := d.feed([]byte("data: \xff\n"), nil); !errors.Is(err, errMalformedStream) {
		t.Fatalf("%v", err)
	}
}

// FuzzSSEAndSnapshots feeds arbitrary bytes to the decoder and every
// event's data to the snapshot parser: errors, never a panic.
func FuzzSSEAndSnapshots(f *testing.F) {
	f.Add([]byte("event: snapshot\nid: 1\ndata: {\"ring\":\"r\",\"version\":1,\"config\":{},\"nodes\":[],\"fingerprint\":\"00\"}\n\n"))
	f.Add([]byte("data: \xff\r\r\n\n:\n"))
	f.Add([]byte("event: reset\ndata: {\"config\":{\"algorithm\":\"table\"},\"nodes\":[{\"id\":\"a\"}],\"table_moves\":\"AAAA\"}\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var d sseDecoder
		events, _ := d.feed(b, nil)
		for _, ev := range events {
			if s, err := placement.ParseSnapshot([]byte(ev.data)); err == nil {
				_, _ = s.Placement(placement.TableSource{})
			}
		}
	})
}
