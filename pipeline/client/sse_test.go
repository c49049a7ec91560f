package client

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// readEvents reads every event of in, and checks that a borrowing reader
// (the client's) yields the same events at each step.
func readEvents(t testing.TB, in string) ([]sseEvent, error) {
	t.Helper()
	r := newSSEReader(strings.NewReader(in))
	br := newSSEReader(strings.NewReader(in))
	br.borrow = true
	var evs []sseEvent
	for range len(in) + 2 { // each event consumes at least one byte
		ev, err := r.Next()
		bev, berr := br.Next()
		if ev.Name != bev.Name || !bytes.Equal(ev.Data, bev.Data) || !errors.Is(berr, err) && (err == nil || berr == nil || err.Error() != berr.Error()) {
			t.Fatalf("borrowing reader read %+v, %v; copying reader %+v, %v", bev, berr, ev, err)
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return evs, nil
			}
			return evs, err
		}
		evs = append(evs, ev)
	}
	t.Fatalf("reader did not terminate on %q", in)
	return nil, nil
}

func TestSSEReader(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []string // event data
		wantErr error
	}{
		{"basic", "data: a\n\ndata: b\n\n", []string{"a", "b"}, nil},
		{"no space", "data:{}\n\n", []string{"{}"}, nil},
		{"crlf", "data: {}\r\n\r\ndata: [DONE]\r\n\r\n", []string{"{}", "[DONE]"}, nil},
		{"comments and fields", ": ping\nevent: message\nid: 3\nretry: 10\ndata: x\n\n", []string{"x"}, nil},
		{"multi-line data", "data: a\ndata: b\n\n", []string{"a\nb"}, nil},
		{"json separated by single newlines", "data: {\"a\":1}\ndata: {\"b\":2}\n", []string{`{"a":1}`, `{"b":2}`}, nil},
		{"done without newline", "data: [DONE]", []string{"[DONE]"}, nil},
		{"keep-alive blank lines", "\n\n\ndata: x\n\n\n\n", []string{"x"}, nil},
		{"cut mid json", "data: {}\n\ndata: {\"choi", []string{"{}"}, errIncompleteEvent},
		{"garbage line", "data: {}\n\n<html>\n", []string{"{}"}, errSSESyntax},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs, err := readEvents(t, tt.in)
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("error = %v, want %v", err, tt.wantErr)
			}
			var got []string
			for _, ev := range evs {
				got = append(got, string(ev.Data))
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("events = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSSEReader_EventName(t *testing.T) {
	evs, err := readEvents(t, "event: error\ndata: {\"message\":\"x\"}\n\ndata: y\n\n")
	if err != nil || len(evs) != 2 || evs[0].Name != "error" || evs[1].Name != "" {
		t.Errorf("events = %+v, %v", evs, err)
	}
}

// FuzzSSE feeds arbitrary bytes to the reader and the chunk accumulator:
// they must terminate without panicking, never return data with a CR, and
// read back payloads written as a well-formed stream.
func FuzzSSE(f *testing.F) {
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\n\ndata: [DONE]\n\n"), "{\"a\":1}")
	f.Add([]byte(": ping\r\n\r\ndata:{\"error\":{\"message\":\"oom\",\"code\":500}}\r\n\r\n"), "[DONE]")
	f.Add([]byte("data: {\"choi"), "x")
	f.Add([]byte("event: error\ndata: \"boom\"\n\n"), "")
	f.Fuzz(func(t *testing.T, raw []byte, payload string) {
		r := newSSEReader(bytes.NewReader(raw))
		acc := newStreamAcc(NewClock(), 2)
		for i := 0; ; i++ {
			if i > len(raw)+2 {
				t.Fatalf("reader did not terminate on %q", raw)
			}
			ev, err := r.Next()
			if err != nil {
				break
			}
			if bytes.ContainsRune(ev.Data, '\r') {
				t.Fatalf("event data %q holds a CR", ev.Data)
			}
			if acc.consume(ev.Name, ev.Data) != nil || acc.done {
				break
			}
		}

		if strings.ContainsAny(payload, "\r\n") {
			return
		}
		stream := "data: " + payload + "\n\n"
		evs, err := readEvents(t, stream)
		if err != nil || len(evs) != 1 || string(evs[0].Data) != payload {
			t.Errorf("round trip of %q: %+v, %v", payload, evs, err)
		}
	})
}
