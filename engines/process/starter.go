// Package process starts and watches an engine from a protocol's start:
// command, an external process extractbench owns for a variant's turn: its
// own process group (stopped whole), a log in the results directory with
// the run's secrets redacted, a pid file that lets a resumed run stop an
// engine its interrupted attempt left behind, and the evidence of how it
// ended. Starter implements the root's ProcessStarter; cmd/extractbench
// wires it in, so that pipeline imports no engine.
package process

import (
	"context"
	"fmt"
	"time"

	"github.com/extractbench/extractbench"
)

// Starter starts external engines (extractbench.ProcessStarter).
type Starter struct{}

// StopStale stops the engine an interrupted attempt left running, found
// by its pid file; for an engine that daemonised, the protocol's stop:
// command is run as well, since the pid it recorded was only the launcher's.
func (Starter) StopStale(v *extractbench.Variant, files extractbench.ProcessFiles, redact extractbench.Redact) (string, error) {
	what, err := StopStale(files.PID)
	if err != nil || what == "" {
		return what, err
	}
	if v.Engine.Stop != "" {
		if err := runStopCommandTo(v.Engine.Stop, files.Log, redact); err != nil {
			what += fmt.Sprintf("; the stop command failed: %v", err)
		} else {
			what += "; ran the stop command"
		}
	}
	return what, nil
}

// StartProcess runs the variant's start command and waits until health
// answers; it times the load and records the engine's pid once it is ready
// (the shell has exec'd the engine by then).
func (Starter) StartProcess(ctx context.Context, v *extractbench.Variant, files extractbench.ProcessFiles, redact extractbench.Redact, health func(context.Context) error) (extractbench.Process, error) {
	p, err := Start(v.Engine.Start, v.Engine.Stop, files.Log, files.PID, redact)
	if err != nil {
		return nil, err
	}
	d, err := p.WaitReady(ctx, time.Duration(v.Engine.ReadyTimeout), health)
	if err != nil {
		p.Stop()
		return nil, fmt.Errorf("variant %s: %w", v.Name, err)
	}
	p.refreshPIDFile()
	p.loadTime = d
	return p, nil
}

// LoadTime is how long the engine took to answer health (WaitReady).
func (p *Process) LoadTime() time.Duration { return p.loadTime }

// LoadDetail says how the load time was read, for the engine_load event.
func (p *Process) LoadDetail() string {
	detail := fmt.Sprintf("start command until /health answered (checked every %s by then: the figure is at most that late)", readyPollInterval(p.loadTime).Round(time.Millisecond))
	if p.Daemonised() {
		detail += " (the start command daemonised the engine; stop: ends it)"
	}
	return detail
}

var (
	_ extractbench.ProcessStarter = Starter{}
	_ extractbench.Process        = (*Process)(nil)
)
