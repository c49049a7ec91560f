package pipeline

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/engines/process"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/pipeline/protocol"
	"github.com/extractbench/extractbench/schemas"
)

// exitedEngine starts command as an engine and waits for it to end.
func exitedEngine(t *testing.T, command string) *process.Process {
	t.Helper()
	p, err := process.Start(command, "", filepath.Join(t.TempDir(), "engine.log"), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop() })
	if exited, _, _ := p.CrashEvidence(10 * time.Second); !exited {
		t.Fatal("the engine did not exit")
	}
	return p
}

// TestScore_HTTP404IsNotMemory is issue 11's misclassification: the
// started engine had exited (it could not bind its port) while another
// server answered 404 "model does not exist". An HTTP answer comes from a
// live server: the request is an error with the body, never memory.
func TestScore_HTTP404IsNotMemory(t *testing.T) {
	e := &engine{proc: exitedEngine(t, "echo 'OSError: [Errno 98] Address already in use'; exit 1")}
	rs := &runState{proto: &protocol.Protocol{}, evalOpts: eval.Options{Rule: extractbench.Strict, Schema: schemas.Extraction()}}
	body := `{"object":"error","message":"The model ` + "`sim-8b`" + ` does not exist.","type":"NotFoundError","param":null,"code":404}`
	resp := extractbench.Response{Transport: extractbench.Transport{Kind: extractbench.TransportHTTPStatus, HTTPStatus: 404, ErrorBody: body, Detail: "HTTP 404: The model `sim-8b` does not exist."}}
	rec := rs.score(&extractbench.Variant{Name: "v"}, e, "http://127.0.0.1:8000", corpus.Document{ID: "d1"}, resp)
	if rec.Failure != extractbench.Error || rec.EngineDied {
		t.Errorf("failure %q, engine_died %v; want error, false", rec.Failure, rec.EngineDied)
	}
	if !strings.Contains(rec.FailureDetail, "404") {
		t.Errorf("failure detail %q does not name the 404", rec.FailureDetail)
	}
}

// TestEngine_Attribute: which failed requests an engine's death explains,
// and with what evidence.
func TestEngine_Attribute(t *testing.T) {
	refused := extractbench.Transport{Kind: extractbench.TransportRefused, Detail: "send request: connection refused"}
	reset := extractbench.Transport{Kind: extractbench.TransportReset, Detail: "read stream: connection reset by peer"}
	tests := []struct {
		name       string
		e          *engine
		tr         extractbench.Transport
		wantDied   bool
		wantDetail string
	}{
		// Issue 40 item 2: a refusal is a death (the health check decides,
		// engine.deadEngine), not memory: there is no evidence of memory.
		{"remote engine refuses after answering", &engine{}, refused, false, ""},
		{"remote engine resets", &engine{}, reset, false, ""},
		{"started engine, log says OOM", &engine{proc: exitedEngine(t, "echo 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB'; exit 1")}, refused, true, "CUDA out of memory"},
		// A SIGKILL anyone may send is not memory without the cgroup's or
		// the kernel's word (issue 40 item 2: it was classed memory).
		{"started engine killed by SIGKILL", &engine{proc: exitedEngine(t, "kill -KILL $$")}, reset, false, "without memory evidence"},
		{"started engine exits without evidence", &engine{proc: exitedEngine(t, "echo 'ValueError: bad config'; exit 1")}, refused, false, "neither its log"},
		{"timeout is our clock", &engine{proc: exitedEngine(t, "exit 1")}, extractbench.Transport{Kind: extractbench.TransportTimeout}, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, evidence := tt.e.attribute(tt.tr)
			if got.EngineDied != tt.wantDied || !strings.Contains(evidence, tt.wantDetail) || (tt.wantDetail == "") != (evidence == "") {
				t.Errorf("attribute() = died %v, evidence %q; want %v, %q", got.EngineDied, evidence, tt.wantDied, tt.wantDetail)
			}
		})
	}
}

func TestEngine_IsLocal(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		e    extractbench.Engine
		want bool
	}{
		{extractbench.Engine{URL: "http://127.0.0.1:8000"}, true},
		{extractbench.Engine{URL: "http://localhost:8000"}, true},
		{extractbench.Engine{URL: "http://[::1]:8000"}, true},
		{extractbench.Engine{URL: "http://gpu-box.internal:8000"}, false},
		{extractbench.Engine{URL: "http://10.0.0.5:8000", Start: "ssh gpu-box vllm serve ..."}, true},
		{extractbench.Engine{URL: "http://10.0.0.5:8000", Local: &yes}, true},
		{extractbench.Engine{URL: "http://127.0.0.1:8000", Local: &no}, false},
	}
	for _, tt := range tests {
		if got := tt.e.IsLocal(); got != tt.want {
			t.Errorf("IsLocal(%+v) = %v, want %v", tt.e, got, tt.want)
		}
	}
}
