package hostile

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestTransportModes_Health: every transport mode answers /health, as a
// run's first call needs (TransportH2COnly in the one protocol it speaks).
func TestTransportModes_Health(t *testing.T) {
	for _, m := range Modes() {
		if !strings.HasPrefix(string(m), "transport-") {
			continue
		}
		s := MustNew(t, m, Options{APIKey: "k-0123456789"})
		c := http.DefaultClient
		if m == TransportH2COnly {
			c = h2cClient()
		}
		res, err := c.Get(s.URL + "/health")
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("%s: /health = %d", m, res.StatusCode)
		}
	}
}

// TestSilent_ReleasedOnClose: a held request lets go when the server
// closes, so that a failing test never hangs in Close.
func TestSilent_ReleasedOnClose(t *testing.T) {
	s, err := New(TransportSilentVersion, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		res, err := http.Get(s.URL + "/version")
		if err == nil {
			_, err = io.ReadAll(res.Body)
			res.Body.Close()
		}
		got <- err
	}()
	time.Sleep(50 * time.Millisecond) // let the request arrive and be held
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("Close still waits for the held request")
	}
	<-got
}
