package pipeline

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results"
)

// startProcess runs the variant's start command and waits until the engine
// answers: first it stops an engine an interrupted attempt of this run left
// behind (its pid file), then it refuses a port something else answers on,
// then it starts, times the load and records the pid.
func (rs *runState) startProcess(ctx context.Context, v *extractbench.Variant, e *engine) error {
	logPath := filepath.Join(rs.opts.OutDir, "engine-"+v.Name+".log")
	pidPath := enginePIDPath(rs.opts.OutDir, v.Name)
	if err := rs.stopStale(ctx, v, pidPath, logPath); err != nil {
		return err
	}
	if err := checkPortFree(ctx, v, e.client); err != nil {
		return err
	}
	rs.logf("%s: starting engine: %s (log %s)", v.Name, v.Engine.Start, logPath)
	proc, err := StartEngine(v.Engine.Start, v.Engine.Stop, logPath, pidPath, rs.secrets)
	if err != nil {
		return err
	}
	e.proc = proc
	d, err := proc.WaitReady(ctx, time.Duration(v.Engine.ReadyTimeout), e.client.Health)
	if err != nil {
		proc.Stop()
		return fmt.Errorf("variant %s: %w", v.Name, err)
	}
	proc.refreshPIDFile()
	e.loadTime = d
	detail := fmt.Sprintf("start command until /health answered (checked every %s by then: the figure is at most that late)", readyPollInterval(d).Round(time.Millisecond))
	if proc.Daemonised() {
		detail += " (the start command daemonised the engine; stop: ends it)"
	}
	rs.event(ctx, v.Name, results.EventEngineLoad, d.Nanoseconds(), detail)
	rs.logf("%s: engine ready after %s", v.Name, d.Round(time.Millisecond))
	return nil
}

// stopStale stops the engine an interrupted attempt left running, found
// by its pid file; for an engine that daemonised, the protocol's stop:
// command is run as well, since the pid it recorded was only the launcher's.
func (rs *runState) stopStale(ctx context.Context, v *extractbench.Variant, pidPath, logPath string) error {
	what, err := StopStaleEngine(pidPath)
	if err != nil {
		return err
	}
	if what == "" {
		return nil
	}
	if v.Engine.Stop != "" {
		if err := runStopCommandTo(v.Engine.Stop, logPath, rs.secrets); err != nil {
			what += fmt.Sprintf("; the stop command failed: %v", err)
		} else {
			what += "; ran the stop command"
		}
	}
	rs.logf("%s: %s", v.Name, what)
	rs.event(ctx, v.Name, results.EventEngineStale, 0, what)
	return nil
}
