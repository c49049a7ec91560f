//go:build linux

package pipeline_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/engines/hostile"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/resultstest"
)

// urlProtocol writes a protocol of one variant v on the engine at url
// (serving hostile.Model) over docs documents, one pass at concurrency 1;
// requestTimeout bounds a request and, at most, a metadata call.
func urlProtocol(t *testing.T, dir, url string, docs int, requestTimeout string) string {
	t.Helper()
	p := fmt.Sprintf(`name: transport
corpus: %s
prompt: {user: "Extract date, amount and category.\n\n{{document}}"}
generation: {max_tokens: 64, temperature: 0}
acceptance: {min_accepted: 0}
sweep: %s
request_timeout: %s
variants:
  - name: v
    engine: {url: %q, model: %s}
`, writeSmallCorpus(t, dir, docs), oneLevel, requestTimeout, url, hostile.Model)
	path := filepath.Join(dir, "transport.yaml")
	if err := os.WriteFile(path, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runWithin runs opts and fails the test if the run has not ended after
// limit: a generous bound on a run that must not hang, not a speed check.
func runWithin(t *testing.T, limit time.Duration, opts pipeline.Options) *pipeline.RunReport {
	t.Helper()
	type result struct {
		sum *pipeline.RunReport
		err error
	}
	done := make(chan result, 1)
	go func() {
		sum, err := run(t, opts)
		done <- result{sum, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.sum
	case <-time.After(limit):
		t.Fatalf("the run has not ended after %s", limit)
		return nil
	}
}

// TestRun_SilentMetadataCalls is item 6 at the run: an engine that never
// answers /version, /v1/models or POST /reset_peaks does not hold the run;
// each miss is an event, and every document is measured.
func TestRun_SilentMetadataCalls(t *testing.T) {
	for mode, call := range map[hostile.Mode]string{
		hostile.TransportSilentVersion:    "GET /version",
		hostile.TransportSilentModels:     "GET /v1/models",
		hostile.TransportSilentResetPeaks: "POST /reset_peaks",
	} {
		t.Run(string(mode), func(t *testing.T) {
			s := hostile.MustNew(t, mode, hostile.Options{})
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			sum := runWithin(t, 2*time.Minute, pipeline.Options{ProtocolPath: urlProtocol(t, dir, s.URL, 3, "1s"), OutDir: out})
			if sum.Status != "complete" {
				t.Errorf("run status %q, want complete", sum.Status)
			}
			if got := resultstest.Count(resultstest.Requests(t, out), func(r *extractbench.Record) bool { return r.Kind == extractbench.TransportOK }); got != 3 {
				t.Errorf("%d requests completed, want 3", got)
			}
			if got := eventCount(t, out, results.EventEngineCallTimeout, "%"+call+"%no answer%"); got == 0 {
				t.Errorf("no %s event names %s", results.EventEngineCallTimeout, call)
			}
		})
	}
}

// TestRun_EngineClosesAfterEveryStream is the llama.cpp issue at the run:
// the engine closes its connection after every streamed answer while it
// advertises keep-alive; no request is charged to it.
func TestRun_EngineClosesAfterEveryStream(t *testing.T) {
	s := hostile.MustNew(t, hostile.TransportCloseAfterStream, hostile.Options{})
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	const docs = 8
	runWithin(t, 2*time.Minute, pipeline.Options{ProtocolPath: urlProtocol(t, dir, s.URL, docs, "20s"), OutDir: out})
	reqs := resultstest.Requests(t, out)
	if got := resultstest.Count(reqs, func(r *extractbench.Record) bool {
		return r.Kind == extractbench.TransportOK && r.Failure != extractbench.Error
	}); got != docs {
		var kinds []string
		for _, r := range reqs {
			kind := string(r.Kind)
			if kind == "" {
				kind = "ok"
			}
			kinds = append(kinds, kind+": "+r.Detail)
		}
		t.Errorf("%d of %d requests completed; want every one (transport kinds: %s)", got, docs, strings.Join(kinds, "; "))
	}
	if got := s.Requests.Load(); got != docs {
		t.Errorf("the engine answered %d chat requests, want %d", got, docs)
	}
}

// TestRun_ClientFaultsNotCharged is item 11 at the run: requests that fail
// in the client itself (a dial refused with EMFILE, as under ulimit -n 150)
// are stored as transport kind client, counted in no figure of the engine
// (no failure class, not in the pass's documents), and flag the pass client_bound
// with an event.
func TestRun_ClientFaultsNotCharged(t *testing.T) {
	// An engine that closes every connection after its answer, so that each
	// request dials and the dial fault hits the requests meant to be hit.
	mux := hostile.BaseMux(hostile.Options{})
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) { hostile.StreamAnswer(w, hostile.Answer) })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		mux.ServeHTTP(w, r)
	}))
	defer srv.Close()

	var armed atomic.Bool
	var d net.Dialer
	defer pipeline.SetClientDial(func(ctx context.Context, network, addr string) (net.Conn, error) {
		if armed.Load() {
			return nil, &net.OpError{Op: "dial", Net: network, Err: os.NewSyscallError("socket", syscall.EMFILE)}
		}
		return d.DialContext(ctx, network, addr)
	})()
	const docs, sent = 6, 2 // the first two requests go out, the others fail in the client
	var n atomic.Int64
	before := func() {
		if n.Add(1) > sent {
			armed.Store(true)
		}
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	sum := runWithin(t, 2*time.Minute, pipeline.Options{ProtocolPath: urlProtocol(t, dir, srv.URL, docs, "20s"), OutDir: out, BeforeSend: before})

	reqs := resultstest.Requests(t, out)
	if got := resultstest.Count(reqs, func(r *extractbench.Record) bool {
		return r.Kind == extractbench.TransportClient && r.Failure == extractbench.None && !r.Accepted
	}); got != docs-sent {
		t.Errorf("%d requests of kind client without a failure class, want %d", got, docs-sent)
	}
	if got := resultstest.Count(reqs, func(r *extractbench.Record) bool {
		return r.Kind == extractbench.TransportClient && resultstest.Like(r.Detail, "%too many open files%")
	}); got != docs-sent {
		t.Errorf("%d client requests name the error, want %d", got, docs-sent)
	}
	if len(sum.Passes) != 1 {
		t.Fatalf("%d passes, want 1", len(sum.Passes))
	}
	p := sum.Passes[0]
	if p.Docs != sent || p.Failures.Of(extractbench.Error) != 0 || p.Status != extractbench.PassComplete {
		t.Errorf("pass: %d documents, %d error failures, status %q; want %d, 0, complete", p.Docs, p.Failures.Of(extractbench.Error), p.Status, sent)
	}
	if p.ClientBound == nil || !*p.ClientBound || p.Verdict != "not_usable" || !strings.Contains(p.VerdictReason, "client-bound") {
		t.Errorf("pass client_bound = %v, verdict %q (%s); want client-bound, not usable", p.ClientBound != nil && *p.ClientBound, p.Verdict, p.VerdictReason)
	}
	if got := eventCount(t, out, results.EventClientFaults, fmt.Sprintf("%% %d of %d requests %%", docs-sent, docs)); got != 1 {
		t.Errorf("%d %s events naming %d of %d, want 1", got, results.EventClientFaults, docs-sent, docs)
	}
}

// TestRun_BinaryErrorBodyExportsUTF8 is item 9 at the run: an engine
// answering a 500 with a binary body leaves every string of
// requests.parquet valid UTF-8 (DuckDB refuses the file otherwise).
func TestRun_BinaryErrorBodyExportsUTF8(t *testing.T) {
	s := hostile.MustNew(t, hostile.TransportBinary500, hostile.Options{})
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	runWithin(t, 2*time.Minute, pipeline.Options{ProtocolPath: urlProtocol(t, dir, s.URL, 3, "20s"), OutDir: out})
	if got := resultstest.Count(resultstest.Requests(t, out), func(r *extractbench.Record) bool { return r.HTTPStatus == 500 && r.ErrorBody != "" }); got != 3 {
		t.Fatalf("%d requests kept the 500's body, want 3", got)
	}
	checkParquetUTF8(t, filepath.Join(out, results.RequestsParquet))
}

// checkParquetUTF8 reads a Parquet file back and fails on any string that
// is not valid UTF-8.
func checkParquetUTF8(t *testing.T, path string) {
	t.Helper()
	tbl := readParquet(t, path)
	defer tbl.Release()
	strs := 0
	for i, f := range tbl.Schema().Fields() {
		for _, chunk := range tbl.Column(i).Data().Chunks() {
			col, ok := chunk.(*array.String)
			if !ok {
				continue
			}
			for j := range col.Len() {
				strs++
				if v := col.Value(j); !utf8.ValidString(v) {
					t.Errorf("%s row %d column %s is not valid UTF-8: %q", filepath.Base(path), j, f.Name, v)
				}
			}
		}
	}
	if strs == 0 {
		t.Errorf("%s has no string value", path)
	}
}
