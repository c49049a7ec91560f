package client

import (
	"context"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/engines/hostile"
	"github.com/extractbench/extractbench/pipeline/pipelinetest"
)

// countingConn counts the writes made on a connection.
type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// TestChat_RequestInOneWrite: a request with a prompt of 20 KB (a long
// document) goes out in one write, not one per 4 KiB of net/http's default
// buffer: each write is a system call, and on a machine where those are
// dear they were a large share of a run's CPU per request.
func TestChat_RequestInOneWrite(t *testing.T) {
	s := hostile.MustNew(t, hostile.Normal, hostile.Options{})
	var writes atomic.Int64
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countingConn{Conn: c, writes: &writes}, nil
	}
	c := New(Config{BaseURL: s.URL, Model: hostile.Model, Dial: dial})
	defer c.Close()
	user := strings.Repeat("Invoice line 42: 3 x paper, 12.50 EUR\n", 20000/38)
	for i := range 3 {
		before := writes.Load()
		r := c.Chat(pipelinetest.Context(t), extractbench.NewClock(), 1, "You extract fields.", user, Generation{MaxTokens: 64})
		if r.Kind != extractbench.TransportOK || r.Output != hostile.Answer {
			t.Fatalf("request %d: %s %s, output %q", i, r.Kind, r.Detail, r.Output)
		}
		if got := writes.Load() - before; got != 1 {
			t.Errorf("request %d with a %d-byte prompt took %d writes, want 1", i, len(user), got)
		}
	}
}
