package client_test

import (
	"context"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/engines/hostile"
	"github.com/extractbench/extractbench/pipeline/client"
)

// TestClient_H2COnlyEngineGetsAHint is issue 40 item 10's fourth error: an
// engine that speaks only cleartext HTTP/2 failed the health check with
// net/http's bare "malformed HTTP response" of HTTP/2 frames; the error
// now says what the engine speaks and what to change. An engine that is
// down fails without that hint.
func TestClient_H2COnlyEngineGetsAHint(t *testing.T) {
	const hint = "speaks only cleartext HTTP/2 (h2c)"
	for _, tc := range []struct {
		name   string
		closed bool // the engine stopped: its port refuses
		hint   bool
	}{
		{name: "h2c only", hint: true},
		{name: "stopped", closed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := hostile.MustNew(t, hostile.TransportH2COnly, hostile.Options{})
			if tc.closed {
				s.Close()
			}
			err := client.New(client.Config{BaseURL: s.URL, Model: hostile.Model}).Health(context.Background())
			if err == nil {
				t.Fatal("Health succeeded")
			}
			if got := strings.Contains(err.Error(), hint); got != tc.hint {
				t.Errorf("Health: %v; the h2c hint %v, want %v", err, got, tc.hint)
			}
		})
	}
}
