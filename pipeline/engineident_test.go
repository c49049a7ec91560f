package pipeline

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/schemas"
)

// exitedEngine starts command as an engine and waits for it to end.
func exitedEngine(t *testing.T, command string) *EngineProcess {
	t.Helper()
	p, err := StartEngine(command, "", filepath.Join(t.TempDir(), "engine.log"), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop() })
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
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
	rs := &runState{proto: &Protocol{}, evalOpts: eval.Options{Rule: extractbench.Strict, Schema: schemas.Extraction()}}
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
		{"remote engine refuses after answering", &engine{}, refused, true, "connection refused after a crash"},
		{"remote engine resets", &engine{}, reset, false, ""},
		{"started engine, log says OOM", &engine{proc: exitedEngine(t, "echo 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB'; exit 1")}, refused, true, "CUDA out of memory"},
		{"started engine killed by SIGKILL", &engine{proc: exitedEngine(t, "kill -KILL $$")}, reset, true, "SIGKILL"},
		{"started engine exits without evidence", &engine{proc: exitedEngine(t, "echo 'ValueError: bad config'; exit 1")}, refused, false, "neither its exit nor its log"},
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

// TestEngineScript_KillsGroupOnHangup: the start command's shell kills the
// engine's whole process group when it gets SIGHUP, Pdeathsig's signal.
func TestEngineScript_KillsGroupOnHangup(t *testing.T) {
	p, err := StartEngine("sleep 30 & sleep 30", "", filepath.Join(t.TempDir(), "engine.log"), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	time.Sleep(200 * time.Millisecond)
	if err := syscall.Kill(p.Pid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		t.Fatal("the shell did not end on SIGHUP")
	}
	for deadline := time.Now().Add(3 * time.Second); groupRuns(p.Pid()); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("processes of the engine's group survived its shell's SIGHUP")
		}
	}
}

// groupRuns reports whether a process of group pgid still runs (zombies
// waiting for init to reap them do not).
func groupRuns(pgid int) bool {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" && f[0] != "X" {
			return true
		}
	}
	return false
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
