package pipeline

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/pipeline/client"
	"github.com/extractbench/extractbench/pipeline/telemetry"
	"github.com/extractbench/extractbench/results"
)

// engine is a variant's engine while it is measured, through its
// lifecycle: startEngine starts or reaches it and its replicas
// (enginestart.go), pin records what it says it is (enginepin.go), the
// passes send to its replicas (request.go, replicas.go), died says it can
// take no more work, and stop stops what the run started. checkIdentity
// reads what it is again before each pass (engineidentity.go); a new sign
// of its death belongs in died.
//
// url and client are its first replica's (the one engine of a variant
// with engine.url): what the engine says of itself is asked there;
// requests go to the replica replicas picks.
type engine struct {
	rs        *runState
	v         *extractbench.Variant
	url       string
	client    *client.Client
	replicas  *replicaSet
	proc      extractbench.Process            // nil unless extractbench started it
	inproc    *extractbench.InProcessEngine   // nil unless an EngineStarter started it (the first, with engine.replicas)
	inprocs   []*extractbench.InProcessEngine // every engine an EngineStarter started, stopped by close
	nvidiaSMI bool                            // sample this machine's GPU during passes
	loadTime  time.Duration
	filesDir  string      // where a started engine's log and pid go; "": the results directory
	family    familyState // its engine family: cache reset, telemetry source (engineident.go)
	// identities are what each replica says it is, read when pinned and
	// before every pass (engineidentity.go).
	identities []replicaIdentity
}

// died reports whether the engine can take no more work: the process
// extractbench started has exited, or every replica (the engine itself,
// when it has one) stopped answering its health check after a failure.
func (e *engine) died() bool {
	return e.procExited() || (e.replicas != nil && e.replicas.allDead())
}

// deathDetail says how the engine died, for the engine_dead event.
func (e *engine) deathDetail() string {
	switch {
	case e.procExited():
		return e.proc.ExitStatus()
	case !e.replicas.multi():
		return e.replicas.deathOf(e.replicas.all[0])
	}
	return "every replica stopped answering: " + strings.Join(e.replicas.names(), ", ")
}

// deadError records that a started engine died (the requests it failed
// carry the evidence in failure_detail) and returns the variant's error: no
// more passes, and no retry, are sent to a dead engine; the run goes on
// with the next variant.
func (e *engine) deadError(ctx context.Context, what string) error {
	detail := what + "; no further pass or retry against it (" + e.deathDetail() + ")"
	e.rs.event(ctx, e.v.Name, results.EventEngineDead, 0, detail)
	return fmt.Errorf("engine died %s", detail)
}

// stop ends the variant's use of the engine: an engine that exited before
// it was stopped (a crash, an OOM kill) is recorded, and what extractbench
// started is stopped.
func (e *engine) stop(ctx context.Context) {
	if e.procExited() {
		e.rs.event(ctx, e.v.Name, results.EventEngineExit, 0, e.proc.ExitDetail())
	}
	if err := e.close(); err != nil {
		e.rs.logf("%s: warning: %v", e.v.Name, err)
	}
}

// close stops the engine if extractbench started it; the error is a
// protocol stop: command's failure.
func (e *engine) close() error {
	for _, ie := range e.inprocs {
		_ = ie.Stop()
	}
	if e.proc == nil {
		return nil
	}
	return e.proc.Stop()
}

// procExited reports whether the engine extractbench started has ended on
// its own.
func (e *engine) procExited() bool { return e.proc != nil && e.proc.Exited() }

// metricsEndpoints are the telemetry endpoints sampled during a pass: the
// engine's metrics_url, or each replica's URL + its family's telemetry path
// (/metrics, Ollama's /api/ps); none when the family has none.
func (e *engine) metricsEndpoints() []telemetry.MetricsEndpoint {
	if e.v.Engine.MetricsURL != "" {
		return []telemetry.MetricsEndpoint{{Name: e.replicas.all[0].name, URL: e.v.Engine.MetricsURL}}
	}
	path := e.family.get().Telemetry.Path
	if path == "" {
		return nil
	}
	out := make([]telemetry.MetricsEndpoint, len(e.replicas.all))
	for i, r := range e.replicas.all {
		out[i] = telemetry.MetricsEndpoint{Name: r.name, URL: strings.TrimRight(r.url, "/") + path}
	}
	return out
}
