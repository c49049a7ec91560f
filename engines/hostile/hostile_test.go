package hostile

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestNormal_StreamsAnAnswer(t *testing.T) {
	s := MustNew(t, Normal, Options{})
	res, err := http.Post(s.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if !strings.Contains(string(b), "[DONE]") || s.Requests.Load() != 1 {
		t.Fatalf("got %q after %d requests", b, s.Requests.Load())
	}
}

func TestNew_UnknownMode(t *testing.T) {
	if _, err := New("no-such-mode", Options{}); err == nil {
		t.Fatal("want an error for an unknown mode")
	}
}

// TestUpgradeUnderRun_VersionChanges: /version names the old build for
// the first N chat requests and the new one after.
func TestUpgradeUnderRun_VersionChanges(t *testing.T) {
	s := MustNew(t, UpgradeUnderRun, Options{N: 2})
	version := func() string {
		res, err := http.Get(s.URL + "/version")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}
	for i, want := range []string{UpgradeFrom, UpgradeFrom, UpgradeTo, UpgradeTo} {
		if got := version(); !strings.Contains(got, `"`+want+`"`) {
			t.Errorf("after %d chat requests /version = %s, want %s", i, got, want)
		}
		res, err := http.Post(s.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
}
