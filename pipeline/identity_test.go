package pipeline_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/extractbench/extractbench/engines/hostile"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/resultstest"
)

// identityDocs is the corpus size of the identity tests: a pass is that
// many chat requests.
const identityDocs = 4

// identityProtocol is three repetitions of one level over identityDocs
// documents, one warm-up request per replica, against the engines at urls.
func identityProtocol(t *testing.T, dir string, urls ...string) string {
	t.Helper()
	engine := fmt.Sprintf("{url: %q, model: %s}", urls[0], hostile.Model)
	if len(urls) > 1 {
		engine = fmt.Sprintf("{urls: [%q, %q], model: %s}", urls[0], urls[1], hostile.Model)
	}
	p := fmt.Sprintf(`name: identity
corpus: %s
prompt: {user: "Extract date, amount and category.\n\n{{document}}"}
generation: {max_tokens: 64, temperature: 0}
acceptance: {min_accepted: 0}
sweep: {mode: concurrency, levels: [1], repetitions: 3, warmup: 1}
request_timeout: 1s
variants:
  - name: v
    engine: %s
`, writeSmallCorpus(t, dir, identityDocs), engine)
	path := filepath.Join(dir, "identity.yaml")
	if err := os.WriteFile(path, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRun_EngineUpgradedUnderRun is issue 40 item 3: an engine upgraded
// under a run (hostile.UpgradeUnderRun) is read again before every pass;
// the first read that answers another version stops the variant with an
// engine_changed event naming both, as ERROR, and the passes measured
// before it stay. An engine that stays the same gets no event. An upgrade
// before the first pass leaves nothing measured: no run is recorded, and
// the error says why.
func TestRun_EngineUpgradedUnderRun(t *testing.T) {
	for _, tt := range []struct {
		name    string
		mode    hostile.Mode
		after   int // chat requests answered before the upgrade
		passes  int // complete passes kept
		changed string
	}{
		{"unchanged", hostile.Normal, 0, 3, ""},
		{"upgraded after the first pass", hostile.UpgradeUnderRun, 1 + identityDocs, 1, "%before the pass at level 1, repetition 2%version 0.9.0 → 0.10.0%"},
		{"upgraded during the warm-up", hostile.UpgradeUnderRun, 1, 0, "%before the pass at level 1, repetition 1%version 0.9.0 → 0.10.0%"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := hostile.MustNew(t, tt.mode, hostile.Options{N: tt.after})
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			sum, err := run(t, pipeline.Options{ProtocolPath: identityProtocol(t, dir, s.URL), OutDir: out})
			switch {
			case tt.changed == "" && err != nil:
				t.Fatalf("run: %v", err)
			case tt.changed != "" && (err == nil || !resultstest.Like(err.Error(), "%engine changed%"+tt.changed)):
				t.Fatalf("run error %v, want the engine changed, like %q", err, tt.changed)
			case tt.passes == 0:
				if _, serr := os.Stat(filepath.Join(out, results.DBName)); serr == nil {
					t.Error("a run that measured nothing left results.db")
				}
				return
			}
			if got := len(resultstest.Passes(t, out)); got != tt.passes {
				t.Errorf("%d passes kept, want %d", got, tt.passes)
			}
			changed := resultstest.Where(resultstest.Events(t, out), func(e *results.Event) bool { return e.Kind == results.EventEngineChanged })
			switch {
			case tt.changed == "" && len(changed) != 0:
				t.Errorf("engine_changed events %+v for an engine that stayed the same", changed)
			case tt.changed != "" && (len(changed) != 1 || !resultstest.Like(changed[0].Detail, tt.changed)):
				t.Errorf("engine_changed events %+v, want one like %q", changed, tt.changed)
			}
			if len(sum.Variants) != 1 {
				t.Fatalf("%d variant outcomes, want 1", len(sum.Variants))
			}
			if got := sum.Variants[0].State; tt.changed != "" && got != results.OutcomeError {
				t.Errorf("variant state %s, want ERROR: a changed engine is a fault, not a verdict", got)
			}
			if m := resultstest.Manifest(t, out); tt.changed != "" && m.Engine.Version != hostile.UpgradeFrom {
				t.Errorf("manifest engine version %q, want the pinned %s", m.Engine.Version, hostile.UpgradeFrom)
			}
		})
	}
}

// TestRun_ReplicaUpgradedUnderRun: each replica is read again; one that
// was upgraded (after its warm-up request) stops the variant, named.
func TestRun_ReplicaUpgradedUnderRun(t *testing.T) {
	a := hostile.MustNew(t, hostile.UpgradeUnderRun, hostile.Options{N: 1000})
	b := hostile.MustNew(t, hostile.UpgradeUnderRun, hostile.Options{N: 1})
	dir := t.TempDir()
	_, err := run(t, pipeline.Options{ProtocolPath: identityProtocol(t, dir, a.URL, b.URL), OutDir: filepath.Join(dir, "out")})
	if want := "%engine changed%the engine at " + b.URL + " changed%version 0.9.0 → 0.10.0%"; err == nil || !resultstest.Like(err.Error(), want) {
		t.Fatalf("run error %v, want replica %s named with both versions", err, b.URL)
	}
}

// TestRun_IdentityUnreadIsNoChange: a read of the engine's identity that
// gets no answer in time (its /version held once, after the first pass) is
// an engine_call_timeout event, not a change: every pass is measured.
func TestRun_IdentityUnreadIsNoChange(t *testing.T) {
	s := hostile.MustNew(t, hostile.Normal, hostile.Options{})
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	var held atomic.Bool
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/version" && s.Requests.Load() >= 1+identityDocs && held.CompareAndSwap(false, true) {
			select { // held until the client gives up
			case <-r.Context().Done():
			case <-time.After(time.Minute):
			}
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	if _, err := run(t, pipeline.Options{ProtocolPath: identityProtocol(t, dir, proxy.URL), OutDir: out}); err != nil {
		t.Fatalf("run: %v", err)
	}
	if got := len(resultstest.Passes(t, out)); got != 3 {
		t.Errorf("%d passes, want 3", got)
	}
	if !held.Load() {
		t.Fatal("no /version call was held: the identity was not read again between passes")
	}
	if n := eventCount(t, out, results.EventEngineCallTimeout, "%/version%no answer%identity is not compared before the pass at level 1, repetition 2%"); n != 1 {
		t.Errorf("%d engine_call_timeout events for the held identity read, want 1: %+v", n, resultstest.Events(t, out))
	}
	if n := eventCount(t, out, results.EventEngineChanged, "%"); n != 0 {
		t.Errorf("%d engine_changed events for an identity that could not be read once", n)
	}
}
