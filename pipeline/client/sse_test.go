package client

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/extractbench/extractbench"
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
		{"bare cr", "data: a\r\rdata: b\r\r", []string{"a", "b"}, nil},
		{"bare cr multi-line data", ": ping\rdata: a\rdata: b\r\r", []string{"a\nb"}, nil},
		{"mixed line ends", "data: a\r\n\r\ndata: b\r\rdata: c\n\ndata: d\r\n\n", []string{"a", "b", "c", "d"}, nil},
		{"cr then lf is one line end", "data: a\r\ndata: b\r\n\r\n", []string{"a\nb"}, nil},
		{"llama.cpp error field", "error: {\"code\":400}\n\ndata: [DONE]\n\n", []string{`{"code":400}`, "[DONE]"}, nil},
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
	// llama.cpp's "error: {json}" line is an event named error.
	evs, err = readEvents(t, "data: {}\nerror: {\"code\":500}\n\ndata: [DONE]\n\n")
	if err != nil || len(evs) != 3 || evs[0].Name != "" || evs[1].Name != "error" || string(evs[1].Data) != `{"code":500}` || evs[2].Name != "" {
		t.Errorf("events = %+v, %v", evs, err)
	}
}

// TestSSEReader_SplitLineEnds reads one byte at a time, so that the LF of a
// CRLF comes in a read of its own: it must end nothing (no blank line).
func TestSSEReader_SplitLineEnds(t *testing.T) {
	in := "data: a\r\ndata: b\r\n\r\ndata: c\r\rdata: [DONE]\r\n\r\n"
	r := newSSEReader(iotest.OneByteReader(strings.NewReader(in)))
	var got []string
	for {
		ev, err := r.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			break
		}
		got = append(got, string(ev.Data))
	}
	if want := []string{"a\nb", "c", "[DONE]"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("events = %q, want %q", got, want)
	}
}

// TestSSEReader_EventCap: data lines accumulate until the blank line, so the
// cap bounds the event, not only each line; a comment line is bounded too.
func TestSSEReader_EventCap(t *testing.T) {
	x := strings.Repeat("x", 60)
	tests := []struct {
		name    string
		in      string
		wantErr error
	}{
		{"one line within the cap", "data: " + x + x[:30] + "\n\n", io.EOF},
		{"lines that pass it together", "data: " + x + "\ndata: " + x + "\n\n", errTooLarge},
		{"one line past it", "data: " + x + x + "\n\n", errTooLarge},
		{"a comment past it", ":" + x + x + "\n\n", errTooLarge},
		{"events within it, one after another", "data: " + x + "\n\ndata: " + x + "\n\n", io.EOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newSSEReader(strings.NewReader(tt.in))
			r.maxEvent = 100
			var err error
			for range 4 {
				if _, err = r.Next(); err != nil {
					break
				}
			}
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("error = %v, want %v", err, tt.wantErr)
			}
		})
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
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\r\rdata: [DONE]\r\r"), "{}")
	f.Add([]byte(": ping\r\ndata: a\rdata: b\r\n\r\ndata: c\n\r\n"), "a")
	f.Add([]byte("error: {\"code\":400,\"message\":\"exceeds the available context size\",\"n_prompt_tokens\":9}\n\ndata: [DONE]\n\n"), "")
	f.Add([]byte("event: error\rdata: CUDA out of memory\r\r"), "")
	f.Fuzz(func(t *testing.T, raw []byte, payload string) {
		r := newSSEReader(bytes.NewReader(raw))
		acc := newStreamAcc(extractbench.NewClock(), 2)
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
