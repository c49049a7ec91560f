package client

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/extractbench/extractbench"
)

// errIncompleteEvent says the body ended in the middle of an event (for
// example half a JSON chunk and no blank line): the stream was cut.
var errIncompleteEvent = errors.New("stream ended inside an event")

// errSSESyntax says a line is neither an SSE field nor a comment.
var errSSESyntax = errors.New("not an event-stream line")

// errTooLarge says one event (or one line) passed the reader's cap before
// its end: the client reports it as extractbench.TransportTooLarge.
var errTooLarge = errors.New("one event passed its cap before its end")

// sseEvent is one dispatched server-sent event.
type sseEvent struct {
	Name string // the event: field, "" for the default "message"
	Data []byte // the data: lines joined by "\n"
}

// sseReader splits an event stream into events. It follows the WHATWG
// event-stream rules (data lines accumulate, a blank line dispatches,
// ":" starts a comment, "data:" with or without the space, lines ended by
// CRLF, LF or a bare CR) with three tolerances for servers that bend them:
// a data line that follows a complete JSON document dispatches that
// document first (servers that separate chunks with a single newline); at
// the end of the body a pending complete document is dispatched even
// without its blank line; and llama.cpp's "error: {...}" line, a field
// WHATWG would ignore, is read as an event named error carrying that data.
// Any other unknown field is an error: a body that is not an event stream
// (an HTML page) must not read as an empty one.
type sseReader struct {
	r       *bufio.Reader
	name    string
	data    bytes.Buffer
	pending bool // data holds at least one data line
	line    []byte
	eof     bool
	afterCR bool // the last line ended with CR: an LF next completes its CRLF
	// maxEvent bounds one event: its lines until the blank line, or any
	// one line (a comment, a field), since data lines accumulate and a
	// line limit alone bounds nothing. Engines put a whole chunk on one
	// line, up to a whole answer for a non-streamed body sent as an event,
	// so the cap follows the answer's (limits.event).
	maxEvent int
	// borrow makes an event's Data a view of the reader's buffer, valid
	// until the next call to Next, instead of a copy: the client decodes
	// each event before reading the next one.
	borrow bool
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 64<<10), maxEvent: newLimits(DefaultAnswerBytes, 1).event}
}

// Next returns the next event. At a clean end of body it returns io.EOF; if
// the body ended mid-event it returns errIncompleteEvent; a line that is not
// SSE gives an error wrapping errSSESyntax, an event past maxEvent one
// wrapping errTooLarge; read errors are returned as is.
func (s *sseReader) Next() (sseEvent, error) {
	for {
		if s.eof {
			return s.flushAtEOF()
		}
		line, err := s.readLine()
		if err != nil && !errors.Is(err, io.EOF) {
			return sseEvent{}, err
		}
		if errors.Is(err, io.EOF) {
			s.eof = true
			if len(line) == 0 {
				continue
			}
		}
		ev, ok, perr := s.processLine(line)
		if perr != nil {
			return sseEvent{}, perr
		}
		if ok {
			return ev, nil
		}
	}
}

// processLine applies one line; ok reports that an event was dispatched.
func (s *sseReader) processLine(line []byte) (sseEvent, bool, error) {
	if len(line) == 0 {
		if !s.pending {
			s.name = "" // a blank line with no data resets the event name
			return sseEvent{}, false, nil
		}
		return s.dispatch(), true, nil
	}
	if line[0] == ':' {
		return sseEvent{}, false, nil // comment, e.g. ": ping" keep-alives
	}
	field, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		field, value = line[:i], line[i+1:]
		value = bytes.TrimPrefix(value, []byte(" "))
	}
	switch string(field) {
	case "data", "error":
		var ev sseEvent
		ok := s.pending && completeDocument(s.data.Bytes())
		if ok {
			ev = s.dispatch()
			if s.borrow {
				ev.Data = bytes.Clone(ev.Data) // appendData reuses the buffer
			}
		}
		s.appendData(value)
		if field[0] == 'e' {
			// llama.cpp's server writes a failed task as "error: {json}"
			// (server_sent_event(sink, "error", ...)), then data: [DONE].
			s.name = "error"
		}
		return ev, ok, nil
	case "event":
		s.name = string(value)
	case "id", "retry":
		// Reconnection fields; a benchmark never reconnects.
	default:
		return sseEvent{}, false, fmt.Errorf("%w: %q", errSSESyntax, truncate(string(line), 120))
	}
	return sseEvent{}, false, nil
}

func (s *sseReader) appendData(v []byte) {
	if s.pending {
		s.data.WriteByte('\n')
	}
	s.data.Write(v)
	s.pending = true
}

func (s *sseReader) dispatch() sseEvent {
	ev := sseEvent{Name: s.name, Data: s.data.Bytes()}
	if !s.borrow {
		ev.Data = bytes.Clone(ev.Data)
	}
	s.name, s.pending = "", false
	s.data.Reset()
	return ev
}

func (s *sseReader) flushAtEOF() (sseEvent, error) {
	if !s.pending {
		return sseEvent{}, io.EOF
	}
	if completeDocument(s.data.Bytes()) {
		return s.dispatch(), nil
	}
	s.pending = false
	s.data.Reset()
	return sseEvent{}, errIncompleteEvent
}

// readLine returns one line without its end: CRLF, LF or a bare CR (the
// LF of a CRLF is skipped at the start of the next line, so that a line
// ended by CR is returned without waiting for the byte after it). A final
// line with no end is returned together with io.EOF. A line longer than
// what is left of maxEvent is an error wrapping errTooLarge.
func (s *sseReader) readLine() ([]byte, error) {
	s.line = s.line[:0]
	if s.afterCR {
		s.afterCR = false
		if b, err := s.r.Peek(1); err == nil && b[0] == '\n' {
			s.r.Discard(1)
		}
	}
	room := s.maxEvent - s.data.Len()
	for {
		if s.r.Buffered() == 0 {
			if _, err := s.r.Peek(1); err != nil {
				return s.line, err
			}
		}
		buf, _ := s.r.Peek(s.r.Buffered())
		end := bytes.IndexByte(buf, '\n')
		scan := buf
		if end >= 0 {
			scan = buf[:end]
		}
		if cr := bytes.IndexByte(scan, '\r'); cr >= 0 {
			end = cr
		}
		n := len(buf)
		if end >= 0 {
			n = end
		}
		if len(s.line)+n > room {
			return nil, errTooLarge
		}
		s.line = append(s.line, buf[:n]...)
		if end < 0 {
			s.r.Discard(n)
			continue
		}
		s.afterCR = buf[end] == '\r'
		s.r.Discard(end + 1)
		return s.line, nil
	}
}

// completeDocument reports whether data is a whole payload: the [DONE]
// sentinel or one complete JSON value.
func completeDocument(data []byte) bool {
	d := bytes.TrimSpace(data)
	return bytes.Equal(d, []byte("[DONE]")) || (len(d) > 0 && json.Valid(d))
}

// truncate shortens s to at most n bytes, on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && !isRuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// encodingFault refuses a 2xx body in a Content-Encoding other than
// identity. The client asks for identity (Accept-Encoding, and no
// transparent decompression): a server or proxy that compresses a stream
// holds events back until a block fills, so its token times would be the
// compressor's. The body is reported, not decoded, so that the operator
// turns compression off rather than measures through it.
func encodingFault(contentEncoding string) *streamFault {
	enc := strings.ToLower(strings.TrimSpace(contentEncoding))
	if enc == "" || enc == "identity" {
		return nil
	}
	return &streamFault{kind: extractbench.TransportContentType,
		detail: fmt.Sprintf("body is %s-compressed (Content-Encoding: %s) although the client asked for identity: turn compression off at the engine or at the proxy in front of it",
			enc, truncate(contentEncoding, 60))}
}
