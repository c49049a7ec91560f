package hostile

import (
	"bufio"
	"bytes"
	"net"
	"net/http"
)

// TransportH2COnly speaks HTTP/2 over cleartext only (h2c with prior
// knowledge, as an engine behind an HTTP/2-only proxy does): a connection
// that opens with anything but HTTP/2's preface gets HTTP/2's own answer,
// a SETTINGS frame and a GOAWAY (PROTOCOL_ERROR), and is closed, which an
// HTTP/1 client reads as a malformed response. Over h2c it answers as
// Normal does. Requests counts the requests answered.
const TransportH2COnly Mode = "transport-h2c-only"

// h2Preface opens every HTTP/2 connection (RFC 9113 section 3.4).
const h2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// h2Refusal is what an HTTP/2-only server writes to an HTTP/1 client: an
// empty SETTINGS frame, then GOAWAY with last stream 0 and PROTOCOL_ERROR.
var h2Refusal = []byte("\x00\x00\x00\x04\x00\x00\x00\x00\x00" +
	"\x00\x00\x08\x07\x00\x00\x00\x00\x00" + "\x00\x00\x00\x00" + "\x00\x00\x00\x01")

func init() {
	register(TransportH2COnly, func(s *Server, o Options) http.Handler {
		var p http.Protocols
		p.SetUnencryptedHTTP2(true)
		s.Config.Protocols = &p
		s.Listener = h2cListener{s.Listener}
		return Base(s, o, normal)
	})
}

// h2cListener hands the server the connections that open with HTTP/2's
// preface and refuses the others as an HTTP/2-only server does.
type h2cListener struct{ net.Listener }

func (l h2cListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		br := bufio.NewReaderSize(c, len(h2Preface))
		head, err := br.Peek(len(h2Preface))
		if err == nil && bytes.Equal(head, []byte(h2Preface)) {
			return &peekedConn{Conn: c, r: br}, nil
		}
		_, _ = c.Write(h2Refusal)
		_ = c.Close()
	}
}

// peekedConn is a connection whose first bytes were read into r.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekedConn) Read(p []byte) (int, error) { return c.r.Read(p) }
