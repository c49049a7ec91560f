package pipeline

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results"
)

// startProcess runs the variant's start command through the run's
// ProcessStarter and waits until the engine answers: first it stops an
// engine an interrupted attempt of this run left behind (its pid file),
// then it refuses a port something else answers on, then it starts, times
// the load and records the pid.
func (rs *runState) startProcess(ctx context.Context, v *extractbench.Variant, e *engine) error {
	if rs.opts.Process == nil {
		return &ConfigError{fmt.Errorf("variant %s: engine.start is set but this program cannot start engines (no ProcessStarter wired in)", v.Name)}
	}
	files := extractbench.ProcessFiles{
		Log: filepath.Join(rs.opts.OutDir, "engine-"+v.Name+".log"),
		PID: filepath.Join(rs.opts.OutDir, "engine-"+v.Name+".pid"),
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
