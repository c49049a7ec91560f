package pipeline

import (
	"context"
	"fmt"
	"math"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/pipeline/client"
	"github.com/extractbench/extractbench/results"
)

// engine is a variant's engine while it is measured. url and client are
// its first replica's (the one engine of a variant with engine.url): what
// the engine says of itself is asked there; requests go to the replica
// replicas picks.
type engine struct {
	url       string
	client    *client.Client
	replicas  *replicaSet
	proc      extractbench.Process            // nil unless extractbench started it
	inproc    *extractbench.InProcessEngine   // nil unless an EngineStarter started it (the first, with engine.replicas)
	inprocs   []*extractbench.InProcessEngine // every engine an EngineStarter started, stopped by close
	nvidiaSMI bool                            // sample this machine's GPU during passes
	loadTime  time.Duration
	cache     cacheState // its family's prompt-cache reset (cachereset.go)
}

// died reports whether the engine can take no more work: the process
// extractbench started has exited, or every one of several replicas
// stopped answering.
func (e *engine) died() bool {
	return e.procExited() || (e.replicas != nil && e.replicas.multi() && e.replicas.allDead())
}

// deathDetail says how the engine died, for the engine_dead event.
func (e *engine) deathDetail() string {
	if e.procExited() {
		return e.proc.ExitStatus()
	}
	return "every replica stopped answering: " + strings.Join(e.replicas.names(), ", ")
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

// runVariant runs one variant's phases: load, warm-up, baseline, sweep.
func (rs *runState) runVariant(ctx context.Context, v *extractbench.Variant) error {
	eng, err := rs.startEngine(ctx, v)
	if err != nil {
		return err
	}
	defer func() {
		if eng.procExited() { // it ended before we stopped it: a crash, an OOM kill
			rs.event(context.WithoutCancel(ctx), v.Name, results.EventEngineExit, 0, eng.proc.ExitDetail())
		}
		if err := eng.close(); err != nil {
			rs.logf("%s: warning: %v", v.Name, err)
		}
	}()
	if err := rs.pinEngine(ctx, v, eng); err != nil {
		return err
	}
	if err := rs.warmup(ctx, v, eng); err != nil {
		return err
	}
	if eng.died() {
		return rs.engineDead(context.WithoutCancel(ctx), v, eng, "during the warm-up: no measured request was sent")
	}

	levels := rs.levels()
	var stopAt int // a level above which nothing runs, after a memory failure
	for li := 0; li < len(levels); li++ {
		level := levels[li]
		if li == 1 && rs.proto.Sweep.Auto {
			// The synchronous baseline is measured: probe the saturated
			// throughput, then space the sweep's rates between the two.
			chosen, err := rs.autoLevels(ctx, v, eng)
			if err != nil || chosen == nil {
				return err // nil: interrupted, resume measures the rest
			}
			levels = append(levels[:1], chosen...)
			level = levels[li]
		}
		if stopAt != 0 && level > stopAt {
			if rs.proto.Sweep.OnMemoryFailure == "stop" {
				break // the sweep ended: its stop_sweep decision names the levels not run
			}
			rs.decision(ctx, v.Name, results.DecisionSkipLevel, level, 0, fmt.Sprintf("level %d had memory failures; on_memory_failure=%s skips higher levels", stopAt, rs.proto.Sweep.OnMemoryFailure))
			continue
		}
		memFailures := 0
		for rep := 1; rep <= rs.proto.Sweep.Repetitions; rep++ {
			if ctx.Err() != nil {
				return nil
			}
			phase := extractbench.PhaseSweep
			if li == 0 {
				phase = extractbench.PhaseBaseline
			}
			p, err := rs.runPass(ctx, v, eng, level, rep, phase, 0)
			if err != nil {
				return err
			}
			if p != nil {
				memFailures += int(p.Failures.Of(extractbench.Memory))
			}
		}
		if ctx.Err() == nil {
			if err := rs.settleLevel(ctx, v, level); err != nil { // steady.go
				return err
			}
		}
		if li == 0 && rs.proto.Sweep.Auto && len(levels) == 1 {
			levels = append(levels, 0) // the rates come when the probe has run
		}
		if memFailures == 0 || li == 0 || rs.proto.Sweep.OnMemoryFailure == "record" {
			continue
		}
		stopAt = level
		if rs.proto.Sweep.OnMemoryFailure == "stop" {
			if rest := levels[li+1:]; len(rest) > 0 {
				names := make([]string, len(rest))
				for i, l := range rest {
					names[i] = eval.LevelName(rs.proto.Sweep.Mode, l)
				}
				rs.decision(ctx, v.Name, results.DecisionStopSweep, level, 0, fmt.Sprintf("%d memory failure(s) at level %d; on_memory_failure=stop ends the sweep: %s not run",
					memFailures, level, strings.Join(names, ", ")))
			}
			continue
		}
		if rs.proto.Sweep.OnMemoryFailure == "retry_lower" && rs.proto.Sweep.Mode != extractbench.ModeContext { // no class lies between two classes
			lower := (levels[li-1] + level) / 2
			if lower > levels[li-1] && lower < level {
				kind, reason := results.DecisionRetryLower, fmt.Sprintf("%d memory failure(s) at level %d", memFailures, level)
				if rs.proto.Sweep.Mode == extractbench.ModeBatch { // the batch itself is made smaller
					kind, reason = results.DecisionReduceBatch, fmt.Sprintf("%d memory failure(s) in batches of %d; retried in batches of %d", memFailures, level, lower)
				}
				rs.decision(ctx, v.Name, kind, level, lower, reason+"; the first attempt stays the primary result")
				for rep := 1; rep <= rs.proto.Sweep.Repetitions && ctx.Err() == nil; rep++ {
					if _, err := rs.runPass(ctx, v, eng, lower, rep, extractbench.PhaseRetry, level); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// autoLevels is an auto rate sweep's step between its synchronous baseline
// and its rates: a saturation probe (one recorded pass, phase probe, at a
// rate far above capacity: every document arrives within about one
// synchronous request's time) measures the saturated throughput, the
// requests it served per second (a request refused at once is not served); then
// sweep.auto_levels rates are spaced from the synchronous rate up to it
// (extractbench.ChooseAutoLevels), recorded as a decision and in the variant's
// manifest. It returns nil, nil when interrupted before the rates are known.
func (rs *runState) autoLevels(ctx context.Context, v *extractbench.Variant, eng *engine) ([]int, error) {
	bg := context.WithoutCancel(ctx)
	passes, err := rs.store.Passes(bg, rs.runID)
	if err != nil {
		return nil, fmt.Errorf("read the synchronous passes: %w", err)
	}
	var syncRates []float64
	for _, p := range passes {
		if p.Variant == v.Name && p.Mode == extractbench.ModeRate && p.Level == extractbench.SyncLevel && p.Complete() && p.DurationNS > 0 {
			syncRates = append(syncRates, float64(p.Docs)/(float64(p.DurationNS)/1e9))
		}
	}
	if len(syncRates) == 0 {
		if ctx.Err() != nil {
			return nil, nil
		}
		return nil, fmt.Errorf("levels: auto: no complete synchronous pass to measure the synchronous rate from")
	}
	syncRate := eval.Describe(syncRates).P50
	probe := AutoProbeLevel(syncRate, rs.corpus.Len())
	if ctx.Err() != nil {
		return nil, nil
	}
	p, err := rs.runPass(ctx, v, eng, probe, 1, extractbench.PhaseProbe, 0)
	if err != nil {
		return nil, err
	}
	if p == nil || !p.Complete() || p.DurationNS <= 0 {
		if ctx.Err() != nil {
			return nil, nil
		}
		return nil, fmt.Errorf("levels: auto: the saturation probe at %d/s did not complete", probe)
	}
	// Capacity is what the engine served: a request it refused at once
	// (429 above a few in flight) comes back fast and would pass for
	// throughput.
	served, err := rs.servedRequests(bg, rs.passKey(v, probe, 1))
	if err != nil {
		return nil, fmt.Errorf("levels: auto: read the saturation probe's requests: %w", err)
	}
	satRate := float64(served) / (float64(p.DurationNS) / 1e9)
	probeWhat := "one pass"
	if served < p.Docs {
		probeWhat = fmt.Sprintf("one pass: %d of %d requests served, the %d the engine refused or failed (%s) are not capacity",
			served, p.Docs, p.Docs-served, failureList(p.Failures))
	}
	if served == 0 {
		return nil, fmt.Errorf("levels: auto: the saturation probe at %d/s had no request served (%s): no saturated throughput to space rates up to", probe, probeWhat)
	}
	n := rs.proto.Sweep.AutoLevels
	chosen := extractbench.ChooseAutoLevels(syncRate, satRate, n, probe)
	if len(chosen) == 0 {
		return nil, fmt.Errorf("levels: auto: no rate between the synchronous rate %.2f/s and the saturated throughput %.2f/s below the probe's %d/s", syncRate, satRate, probe)
	}
	names := make([]string, len(chosen))
	for i, l := range chosen {
		names[i] = eval.LevelName(extractbench.ModeRate, l)
	}
	rs.decision(bg, v.Name, results.DecisionAutoLevels, probe, slices.Max(chosen), fmt.Sprintf(
		"levels: auto: synchronous rate %.2f/s, saturated throughput %.2f/s (probe at %d/s, %s); %d rates spaced evenly up to it (sweep.auto_levels=%d, whole requests/s): %s",
		syncRate, satRate, probe, probeWhat, len(chosen), n, strings.Join(names, ", ")))
	if idx := slices.IndexFunc(rs.manifest.Variants, func(m extractbench.VariantManifest) bool { return m.Name == v.Name }); idx >= 0 {
		rs.manifest.Variants[idx].AutoLevels = &extractbench.AutoLevels{SyncRate: syncRate, ProbeLevel: probe, SaturatedRate: satRate, Levels: chosen}
		if err := rs.store.UpdateManifest(bg, rs.runID, rs.manifest); err != nil {
			return nil, fmt.Errorf("record the chosen rates in the manifest: %w", err)
		}
	}
	return chosen, nil
}

// servedRequests counts the pass's requests the engine served through
// (extractbench.Transport.Served).
func (rs *runState) servedRequests(ctx context.Context, key extractbench.PassKey) (int64, error) {
	var n int64
	err := rs.store.EachPassRecord(ctx, key, func(r *extractbench.Record) {
		if r.Served() {
			n++
		}
	})
	return n, err
}

// failureList is "error 296, memory 1": the classes a pass's failures fell in.
func failureList(c extractbench.FailureCounts) string {
	var parts []string
	for _, f := range extractbench.Failures {
		if n := c.Of(f); n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", f, n))
		}
	}
	if len(parts) == 0 {
		return "no failure class"
	}
	return strings.Join(parts, ", ")
}

// AutoProbeFactor bounds an auto sweep's saturation probe from below: its
// rate is at least this many times the synchronous rate.
const AutoProbeFactor = 10

// AutoProbeLevel is the rate of an auto sweep's saturation probe: far above
// capacity, so that every one of docs documents arrives within about the
// time one synchronous request takes (and at least AutoProbeFactor times
// the synchronous rate): what the engine then completes per second is its
// saturated throughput. Whole requests per second, within the schema's
// bound on a level.
func AutoProbeLevel(syncRate float64, docs int) int {
	r := syncRate * float64(max(docs, AutoProbeFactor))
	return min(max(int(math.Ceil(r)), 2), 100000)
}

func (rs *runState) decision(ctx context.Context, variant, kind string, from, to int, reason string) {
	rs.logf("decision: %s %s level %d → %d: %s", variant, kind, from, to, reason)
	if err := rs.store.AddDecision(ctx, results.Decision{RunID: rs.runID, Variant: variant, AtMS: time.Now().UnixMilli(),
		Kind: kind, FromLevel: from, ToLevel: to, Reason: reason}); err != nil {
		rs.logf("warning: record decision: %v", err)
	}
}

// startEngine starts (or reaches) the variant's engine and waits until it is ready.
func (rs *runState) startEngine(ctx context.Context, v *extractbench.Variant) (*engine, error) {
	e := &engine{}
	maxLevel := slices.Max(rs.proto.Levels())
	if rs.proto.Sweep.Mode == extractbench.ModeContext {
		maxLevel = rs.proto.Sweep.Concurrency
	}
	if rs.proto.Sweep.Auto && rs.corpus != nil {
		maxLevel = max(maxLevel, rs.corpus.Len()) // the probe sends them all at once
	}
	apiKey := "" // validate checked that a named variable is set
	if v.Engine.APIKeyEnv != "" {
		apiKey = os.Getenv(v.Engine.APIKeyEnv)
	}
	switch {
	case v.Engine.IsBuiltin():
		starter, ok := rs.opts.Starters[v.Engine.URL]
		if !ok {
			return nil, &ConfigError{fmt.Errorf("variant %s: engine.url %s: this program has no in-process engine of that name", v.Name, v.Engine.URL)}
		}
		// The engine outlives an interruption: in-flight requests finish
		// before it stops. engine.replicas starts several, each its own.
		names := replicaNames(v.Engine)
		if names == nil {
			names = []string{v.Engine.URL}
		}
		var reps []*replica
		for _, name := range names {
			ie, err := starter.StartEngine(context.WithoutCancel(ctx), v, rs.proto.Generation, rs.clock.Engine())
			if err != nil {
				e.close()
				return nil, &ConfigError{fmt.Errorf("variant %s: %w", v.Name, err)}
			}
			e.inprocs = append(e.inprocs, ie)
			reps = append(reps, &replica{name: name, url: ie.URL})
		}
		e.inproc = e.inprocs[0]
		e.replicas = newReplicaSet(reps)
	default:
		var reps []*replica
		for _, u := range v.Engine.Endpoints() {
			reps = append(reps, &replica{name: redactURL(u), url: u})
		}
		e.replicas = newReplicaSet(reps)
		e.nvidiaSMI = v.Engine.IsLocal()
	}
	for _, r := range e.replicas.all {
		// Each replica may hold every request of a level: the dispatcher
		// bounds the total, not how it falls.
		r.client = client.New(client.Config{BaseURL: r.url, Model: v.Engine.Model, APIKey: apiKey,
			Timeout: time.Duration(rs.proto.RequestTimeout), MaxConns: max(maxLevel, 1), MaxAnswerBytes: rs.proto.MaxAnswerBytes, Dial: clientDial,
			EngineClock: e.inproc != nil && rs.clock.Engine() != nil})
	}
	e.url, e.client = e.replicas.all[0].url, e.replicas.all[0].client
	if v.Engine.Start != "" {
		if err := rs.startProcess(ctx, v, e); err != nil {
			return nil, err
		}
	} else {
		for _, r := range e.replicas.all {
			hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err := r.client.Health(hctx)
			cancel()
			if err != nil {
				e.close()
				return nil, fmt.Errorf("variant %s: engine at %s is not answering: %w", v.Name, r.name, err)
			}
		}
	}
	for _, r := range e.replicas.all {
		if err := rs.checkServedModel(ctx, v, r); err != nil {
			e.close()
			return nil, err
		}
	}
	return e, nil
}

// clientDial, set by a test only, opens the engine clients' connections
// (to make the client itself fail); nil: the client's own dialer.
var clientDial func(ctx context.Context, network, addr string) (net.Conn, error)

// pinEngine records what the engine says of itself (served models, version,
// GPU) in the manifest; on resume it refuses an engine that changed.
func (rs *runState) pinEngine(ctx context.Context, v *extractbench.Variant, e *engine) error {
	idx := slices.IndexFunc(rs.manifest.Variants, func(m extractbench.VariantManifest) bool { return m.Name == v.Name })
	if idx < 0 {
		return fmt.Errorf("variant %s missing from the manifest", v.Name)
	}
	vm := &rs.manifest.Variants[idx]
	info := e.client.Describe(ctx)
	for _, m := range info.Missed {
		rs.noAnswer(ctx, v, e.replicas.all[0].name, m, "the manifest leaves out what it would have said")
	}
	if err := sameEngine(ctx, v, e, info); err != nil {
		return err
	}
	now := engineManifest(ctx, v, *vm, e, info)
	if pinned(*vm) {
		if diff := environmentDiff(*vm, now); diff != "" {
			return environmentChanged(v, diff)
		}
	}
	*vm = now
	if idx == 0 {
		rs.manifest.Engine, rs.manifest.GPU = now.Engine, now.GPU
	}
	if now.Engine.Simulated && !rs.simulated {
		rs.manifest.Simulated, rs.simulated = true, true
		if err := rs.store.SetRunSimulated(ctx, rs.runID, true); err != nil {
			return fmt.Errorf("record that the engine is simulated: %w", err)
		}
	}
	if err := rs.store.UpdateManifest(ctx, rs.runID, rs.manifest); err != nil {
		return fmt.Errorf("record the engine in the manifest: %w", err)
	}
	return nil
}

// warmup sends the warm-up requests, always including the longest document,
// each prompt opened by WarmupMarker so that no measured request is served
// from the engine's prompt cache of them; they are excluded from every
// figure and recorded as an event.
func (rs *runState) warmup(ctx context.Context, v *extractbench.Variant, e *engine) error {
	n := rs.proto.Sweep.Warmup
	if n <= 0 || ctx.Err() != nil {
		return nil
	}
	c := rs.corpus
	longest := c.Doc(0) // the first of the longest, as slices.MaxFunc picks
	for i := 1; i < c.Len(); i++ {
		if d := c.Doc(i); c.TextSize(d) > c.TextSize(longest) {
			longest = d
		}
	}
	picked := []corpus.Document{longest}
	for i := 0; i < c.Len() && len(picked) < n; i++ {
		if d := c.Doc(i); d.ID != longest.ID {
			picked = append(picked, d)
		}
	}
	start := time.Now()
	failed := 0
	var longestFailure string
	// Every replica is an engine of its own, warmed up on the same documents.
	for _, r := range e.replicas.all {
		for _, d := range picked {
			if e.died() || e.replicas.isDead(r) {
				break
			}
			d, ok := rs.readDoc(d)
			if !ok {
				return fmt.Errorf("warm-up: %w", rs.readFailure.err())
			}
			rec := rs.warmupExchange(ctx, v, e, r, d) // its prompt marked: warmup.go
			if !rec.Accepted {
				failed++
				if d.ID == longest.ID {
					on := ""
					if e.replicas.multi() {
						on = " on " + r.name
					}
					longestFailure += fmt.Sprintf("; the longest document (%s) failed%s: %s %s", d.ID, on, rec.Failure, rec.FailureDetail)
				}
			}
		}
	}
	detail := fmt.Sprintf("%d warm-up requests (excluded), %d not accepted%s", len(picked), failed, longestFailure)
	if e.replicas.multi() {
		detail = fmt.Sprintf("%d warm-up requests on each of %d replicas (excluded), %d not accepted%s", len(picked), len(e.replicas.all), failed, longestFailure)
	}
	rs.event(ctx, v.Name, results.EventWarmup, time.Since(start).Nanoseconds(), detail)
	if longestFailure != "" {
		rs.logf("%s: warm-up: %s", v.Name, detail)
	}
	return nil
}
