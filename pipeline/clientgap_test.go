//go:build linux

package pipeline_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/engines/builtin/starter"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/resultstest"
)

// TestRun_ClientFrozen is issue 40 item 1's frozen client: a client stopped
// for seconds (SIGSTOP here; a laptop sleep or a VM pause alike) was
// charged to the engine as one long request (p95 ÷7 of the docs/h, no
// client_bound, exit 0). Now the client's own timeline shows the gap: the
// requests in flight across it are out of the measurement (kind client,
// sent again by -resume), the pass is client_bound with a client_frozen
// event, and the verdict resting on it is INCONCLUSIVE. After -resume on a
// client that stays awake, every document is measured and the variant
// passes. The engine, in this process, keeps running while the client is
// frozen, as a remote engine does.
func TestRun_ClientFrozen(t *testing.T) {
	dir := t.TempDir()
	const docs = 10
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/health":
			return
		case "/v1/chat/completions":
		default:
			http.NotFound(w, r)
			return
		}
		time.Sleep(150 * time.Millisecond)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"{\\\"date\\\": null, \\\"amount\\\": null, \\\"category\\\": null}\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	proto := filepath.Join(dir, "frozen.yaml")
	p := fmt.Sprintf(`name: frozen
corpus: %s
prompt: {user: "Extract.\n\n{{document}}"}
generation: {max_tokens: 64, temperature: 0}
acceptance: {min_accepted: 0}
sweep: {mode: concurrency, levels: [1], repetitions: 1, warmup: 0}
request_timeout: 30s
variants:
  - name: v
    engine: {url: %q, model: m}
`, writeSmallCorpus(t, dir, docs), srv.URL)
	if err := os.WriteFile(proto, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	freezeChild(t, proto, out, 2, 2500*time.Millisecond)

	reqs := resultstest.Requests(t, out)
	frozen := resultstest.Count(reqs, func(r *extractbench.Record) bool {
		return r.Kind == extractbench.TransportClient && strings.Contains(r.Detail, "the client was frozen")
	})
	if frozen < 1 || len(reqs) != docs {
		t.Fatalf("%d rows, %d frozen; want %d rows, the one(s) in flight during the freeze out of the measurement", len(reqs), frozen, docs)
	}
	for _, r := range reqs {
		if r.Kind.Measured() && r.DoneNS-r.SendNS > int64(2*time.Second) {
			t.Errorf("document %s measured at %s: the freeze was charged to the engine", r.DocID, time.Duration(r.DoneNS-r.SendNS))
		}
	}
	if got := resultstest.Count(resultstest.Events(t, out), func(e *results.Event) bool { return e.Kind == results.EventClientFrozen }); got != 1 {
		t.Errorf("%d client_frozen events, want 1", got)
	}
	passes := resultstest.Passes(t, out)
	if len(passes) != 1 || passes[0].ClientBound == nil || !*passes[0].ClientBound {
		t.Errorf("passes %+v: want the one pass client_bound", passes)
	}
	if o := outcomeOf(t, out); o.State != results.OutcomeInconclusive {
		t.Errorf("outcome %s (%s), want INCONCLUSIVE", o.State, o.Reason)
	}

	if _, err := pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(), OutDir: out, Resume: true, Quiet: true}); err != nil {
		t.Fatalf("resume: %v", err)
	}
	reqs = resultstest.Requests(t, out)
	if measured := resultstest.Count(reqs, func(r *extractbench.Record) bool { return r.Kind.Measured() }); len(reqs) != docs || measured != docs {
		t.Errorf("after -resume: %d rows, %d measured; want all %d", len(reqs), measured, docs)
	}
	if o := outcomeOf(t, out); o.State != results.OutcomePass {
		t.Errorf("after -resume: outcome %s (%s), want PASS", o.State, o.Reason)
	}
}

// freezeChild runs the protocol in a child process (this test binary,
// TestMain) and freezes it with SIGSTOP for d once it has stored after
// rows, then lets it finish.
func freezeChild(t *testing.T, proto, out string, after int, d time.Duration) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "EXTRACTBENCH_TEST_CHILD_PROTOCOL="+proto, "EXTRACTBENCH_TEST_CHILD_OUT="+out)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
		}
	}()
	frozen := false
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if n, ok := resultstest.RequestCount(out); ok && n >= after {
			_ = cmd.Process.Signal(syscall.SIGSTOP)
			time.Sleep(d)
			_ = cmd.Process.Signal(syscall.SIGCONT)
			frozen = true
			break
		}
	}
	_ = cmd.Wait()
	<-drained
	if !frozen {
		t.Fatalf("the child ended before it could be frozen:\n%s", log.String())
	}
}

// TestRun_ClientBoundIsInconclusive is issue 40 item 1's loaded client: a
// client whose own delay passed its bound in every repetition (p99 53-90
// ms with 100% accepted) gave the model FAIL and exit 1. The verdict rests
// on the client's pace, not the engine's: INCONCLUSIVE, with the reason.
// A quality failure on the same client stays the model's FAIL.
func TestRun_ClientBoundIsInconclusive(t *testing.T) {
	stall := func() { time.Sleep(70 * time.Millisecond) }
	const sweep = "{mode: concurrency, levels: [1], repetitions: 2, warmup: 0}"
	_, sum := runRate(t, 6, sweep, "{min_accepted: 0}", "{time_scale: 0, clock: wall}", stall)
	o := sum.Variants[0]
	if o.State != results.OutcomeInconclusive || !strings.Contains(o.Reason, "client-bound") || !strings.Contains(o.Reason, "could not time") {
		t.Errorf("loaded client: %s (%s); want INCONCLUSIVE naming the client", o.State, o.Reason)
	}
	_, sum = runRate(t, 6, sweep, "{min_accepted: 1}", "{time_scale: 0, clock: wall}", stall)
	if o := sum.Variants[0]; o.State != results.OutcomeFail {
		t.Errorf("loaded client, accepted below the threshold: %s (%s); want FAIL, the answers are the model's", o.State, o.Reason)
	}
}
