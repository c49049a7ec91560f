package pipeline

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"time"

	"github.com/extractbench/extractbench/results"
)

// startProcess runs the variant's start command and waits until the engine
// answers: first it stops an engine an interrupted attempt of this run left
// behind (its pid file), then it refuses a port something else answers on,
// then it starts, times the load and records the pid.
func (rs *runState) startProcess(ctx context.Context, v *Variant, e *engine) error {
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
func (rs *runState) stopStale(ctx context.Context, v *Variant, pidPath, logPath string) error {
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

// IsLocal reports whether the engine runs on this machine, so that
// nvidia-smi here describes its GPU: the protocol's engine.local when set,
// else true for an engine extractbench starts or one on a loopback address
// (every replica on one, for engine.urls).
func (e Engine) IsLocal() bool {
	if e.Local != nil {
		return *e.Local
	}
	if e.Start != "" {
		return true
	}
	for _, raw := range e.Endpoints() {
		if !isLoopback(raw) {
			return false
		}
	}
	return true
}

// isLoopback reports whether a URL names this machine.
func isLoopback(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	if u.Hostname() == "localhost" {
		return true
	}
	ip := net.ParseIP(u.Hostname())
	return ip != nil && ip.IsLoopback()
}
