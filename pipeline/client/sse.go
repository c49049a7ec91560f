package client

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// maxSSELine bounds one SSE line. Engines put a whole chunk on one line; a
// chunk with logprobs or a long non-streamed body can reach megabytes, and
// bufio's 64 KiB default would cut those.
const maxSSELine = 8 << 20

// errIncompleteEvent says the body ended in the middle of an event (for
// example half a JSON chunk and no blank line): the stream was cut.
var errIncompleteEvent = errors.New("stream ended inside an event")

// errSSESyntax says a line is neither an SSE field nor a comment.
var errSSESyntax = errors.New("not an event-stream line")

// sseEvent is one dispatched server-sent event.
type sseEvent struct {
	Name string // the event: field, "" for the default "message"
	Data []byte // the data: lines joined by "\n"
}

// sseReader splits an event stream into events. It follows the WHATWG
// event-stream rules (data lines accumulate, a blank line dispatches,
// ":" starts a comment, "data:" with or without the space, CRLF or LF) with
// two tolerances for servers that bend them: a data line that follows a
// complete JSON document dispatches that document first (servers that
// separate chunks with a single newline), and at the end of the body a
// pending complete document is dispatched even without its blank line.
type sseReader struct {
	r       *bufio.Reader
	name    string
	data    bytes.Buffer
	pending bool // data holds at least one data line
	line    []byte
	eof     bool
	// borrow makes an event's Data a view of the reader's buffer, valid
	// until the next call to Next, instead of a copy: the client decodes
	// each event before reading the next one.
	borrow bool
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// Next returns the next event. At a clean end of body it returns io.EOF; if
// the body ended mid-event it returns errIncompleteEvent; a line that is not
// SSE gives an error wrapping errSSESyntax; read errors are returned as is.
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
	case "data":
		if s.pending && completeDocument(s.data.Bytes()) {
			ev := s.dispatch()
			if s.borrow {
				ev.Data = bytes.Clone(ev.Data) // appendData reuses the buffer
			}
			s.appendData(value)
			return ev, true, nil
		}
		s.appendData(value)
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

// readLine returns one line without its LF or CRLF. A final line with no
// newline is returned together with io.EOF.
func (s *sseReader) readLine() ([]byte, error) {
	s.line = s.line[:0]
	for {
		frag, err := s.r.ReadSlice('\n')
		s.line = append(s.line, frag...)
		if len(s.line) > maxSSELine {
			return nil, fmt.Errorf("%w: line longer than %d bytes", errSSESyntax, maxSSELine)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		line := bytes.TrimSuffix(s.line, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		return line, err
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
