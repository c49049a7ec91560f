package pipeline

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/pipeline/client"
	"github.com/extractbench/extractbench/results"
)

// startEngine starts (or reaches) the variant's engine and its replicas,
// connects a client to each and waits until each is ready and serves the
// protocol's model.
func startEngine(ctx context.Context, rs *runState, v *extractbench.Variant) (*engine, error) {
	return startEngineIn(ctx, rs, v, "")
}

// startEngineIn is startEngine with a started engine's log and pid file
// in filesDir instead of the results directory ("": there).
func startEngineIn(ctx context.Context, rs *runState, v *extractbench.Variant, filesDir string) (*engine, error) {
	e := &engine{rs: rs, v: v, filesDir: filesDir}
	if v.Engine.IsBuiltin() {
		if err := e.startInProcess(ctx); err != nil {
			return nil, err
		}
	} else {
		var reps []*replica
		for _, u := range v.Engine.Endpoints() {
			reps = append(reps, &replica{name: redactURL(u), url: u})
		}
		e.replicas = newReplicaSet(reps)
		e.nvidiaSMI = v.Engine.IsLocal()
	}
	e.connect()
	if err := e.ready(ctx); err != nil {
		return nil, err
	}
	return e, nil
}

// startInProcess starts the variant's in-process engine through the
// Starter its engine.url names: engine.replicas starts several, each its
// own. The engine outlives an interruption: in-flight requests finish
// before it stops.
func (e *engine) startInProcess(ctx context.Context) error {
	v := e.v
	starter, ok := e.rs.opts.Starters[v.Engine.URL]
	if !ok {
		return &ConfigError{fmt.Errorf("variant %s: engine.url %s: this program has no in-process engine of that name", v.Name, v.Engine.URL)}
	}
	names := replicaNames(v.Engine)
	if names == nil {
		names = []string{v.Engine.URL}
	}
	var reps []*replica
	for _, name := range names {
		ie, err := starter.StartEngine(context.WithoutCancel(ctx), v, e.rs.proto.Generation, e.rs.clock.Engine())
		if err != nil {
			e.close()
			return &ConfigError{fmt.Errorf("variant %s: %w", v.Name, err)}
		}
		e.inprocs = append(e.inprocs, ie)
		reps = append(reps, &replica{name: name, url: ie.URL})
	}
	e.inproc = e.inprocs[0]
	e.replicas = newReplicaSet(reps)
	return nil
}

// connect gives each replica its client. Each replica may hold every
// request of a level: the dispatcher bounds the total, not how it falls.
func (e *engine) connect() {
	rs, v := e.rs, e.v
	apiKey := "" // validate checked that a named variable is set
	if v.Engine.APIKeyEnv != "" {
		apiKey = os.Getenv(v.Engine.APIKeyEnv)
	}
	for _, r := range e.replicas.all {
		r.client = client.New(client.Config{BaseURL: r.url, Model: v.Engine.Model, APIKey: apiKey,
			Timeout: time.Duration(rs.proto.RequestTimeout), MaxConns: max(rs.maxInFlight(), 1), MaxAnswerBytes: rs.proto.MaxAnswerBytes, Dial: clientDial,
			EngineClock: e.inproc != nil && rs.clock.Engine() != nil})
	}
	e.url, e.client = e.replicas.all[0].url, e.replicas.all[0].client
}

// maxInFlight is the most requests a pass of the run holds in flight: the
// highest level, a context sweep's concurrency, and the whole corpus for an
// auto sweep's probe, which sends them all at once.
func (rs *runState) maxInFlight() int {
	n := slices.Max(rs.proto.Levels())
	if rs.proto.Sweep.Mode == extractbench.ModeContext {
		n = rs.proto.Sweep.Concurrency
	}
	if rs.proto.Sweep.Auto && rs.corpus != nil {
		n = max(n, rs.corpus.Len())
	}
	return n
}

// ready waits for the engine: it runs the start command, or checks that
// each replica answers; then that each serves the protocol's model.
func (e *engine) ready(ctx context.Context) error {
	if e.v.Engine.Start != "" {
		if err := e.startProcess(ctx); err != nil {
			return err
		}
	} else {
		for _, r := range e.replicas.all {
			hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err := r.client.Health(hctx)
			cancel()
			if err != nil {
				e.close()
				return fmt.Errorf("variant %s: engine at %s is not answering: %w", e.v.Name, r.name, err)
			}
		}
	}
	for _, r := range e.replicas.all {
		if err := e.rs.checkServedModel(ctx, e.v, r); err != nil {
			e.close()
			return err
		}
	}
	return nil
}

// clientDial, set by a test only, opens the engine clients' connections
// (to make the client itself fail); nil: the client's own dialer.
var clientDial func(ctx context.Context, network, addr string) (net.Conn, error)

// startProcess runs the variant's start command through the run's
// ProcessStarter and waits until the engine answers: first it stops an
// engine an interrupted attempt of this run left behind (its pid file),
// then it refuses a port something else answers on, then it starts, times
// the load and records the pid.
func (e *engine) startProcess(ctx context.Context) error {
	rs, v := e.rs, e.v
	if rs.opts.Process == nil {
		return &ConfigError{fmt.Errorf("variant %s: engine.start is set but this program cannot start engines (no ProcessStarter wired in)", v.Name)}
	}
	dir := rs.opts.OutDir
	if e.filesDir != "" {
		dir = e.filesDir
	}
	files := extractbench.ProcessFiles{
		Log: filepath.Join(dir, "engine-"+v.Name+".log"),
		PID: filepath.Join(dir, "engine-"+v.Name+".pid"),
	}
	redact := rs.redact()
	what, err := rs.opts.Process.StopStale(v, files, redact)
	if err != nil {
		return err
	}
	if what != "" {
		rs.logf("%s: %s", v.Name, what)
		rs.event(ctx, v.Name, results.EventEngineStale, 0, what)
	}
	if err := checkPortFree(ctx, v, e.client); err != nil {
		return err
	}
	rs.logf("%s: starting engine: %s (log %s)", v.Name, v.Engine.Start, files.Log)
	proc, err := rs.opts.Process.StartProcess(ctx, v, files, redact, e.client.Health)
	if err != nil {
		return err
	}
	e.proc = proc
	e.loadTime = proc.LoadTime()
	rs.event(ctx, v.Name, results.EventEngineLoad, e.loadTime.Nanoseconds(), proc.LoadDetail())
	rs.logf("%s: engine ready after %s", v.Name, e.loadTime.Round(time.Millisecond))
	return nil
}

// redact is the run's secrets as a writer wrapper for engine logs; nil
// when there are none.
func (rs *runState) redact() extractbench.Redact {
	if rs.secrets.Empty() {
		return nil
	}
	return func(w io.Writer) io.WriteCloser { return rs.secrets.Writer(w) }
}
