package pipeline

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/pipeline/client"
	"github.com/extractbench/extractbench/pipeline/protocol"
	"github.com/extractbench/extractbench/results"
)

// cacheFamily is the family whose cache reset the variant's passes use:
// engine.kind when the protocol names it, else what the engine says it is
// (client.Client.DetectKind), asked once per variant. "" is a family unknown.
func (rs *runState) cacheFamily(ctx context.Context, v *extractbench.Variant, e *engine) (family, how string) {
	if e.cache.known {
		return e.cache.family, e.cache.how
	}
	e.cache.known = true
	switch {
	case v.Engine.Kind != "":
		e.cache.family, e.cache.how = v.Engine.Kind, "engine.kind "+v.Engine.Kind
	default:
		d, err := e.client.DetectKind(ctx)
		switch {
		case err != nil:
			e.cache.how = "its kind could not be detected: " + err.Error()
		case d.Kind == "":
			e.cache.how = "its kind is unknown: " + d.Evidence
		default:
			e.cache.family, e.cache.how = d.Kind, "detected "+d.Kind+" ("+d.Evidence+")"
		}
	}
	return e.cache.family, e.cache.how
}

// cacheState is what a variant's engine keeps between passes about its
// cache reset.
type cacheState struct {
	known       bool   // family and how are set
	family      string // client.KindVLLM and its kin, or "" unknown
	how         string // how the family was learnt, for the events
	unsupported bool   // the variant's unsupported event is written
}

// resetCache empties the engine's prompt cache before a measured pass when
// the protocol says cache: reset (MEASUREMENT.md, "Caches between passes"),
// on every replica, and returns the pass's cache_reset: "reset", "kept",
// "unsupported" or "failed: ...". Each reset asked is an event with the
// engine's answers; a family without one is an event once per variant. A
// reset that fails is a warning and the pass's label, never the run's end.
func (rs *runState) resetCache(ctx context.Context, v *extractbench.Variant, e *engine, level, rep int) string {
	if rs.proto.Cache == protocol.CacheKeep {
		return client.CacheKept
	}
	family, how := rs.cacheFamily(ctx, v, e)
	pass := fmt.Sprintf("pass at level %d, repetition %d", level, rep)
	if !client.CanResetCache(family) {
		if !e.cache.unsupported {
			e.cache.unsupported = true
			r := e.client.ResetCache(ctx, family) // unsupported: nothing is sent
			rs.event(context.WithoutCancel(ctx), v.Name, results.EventCacheReset, 0,
				fmt.Sprintf("%s: %s (%s): every pass is measured with what the earlier ones cached; compare cached_prompt_share", pass, r.Detail, how))
		}
		return client.CacheResetUnsupported
	}
	start := time.Now()
	outcome := client.CacheResetDone
	var parts, failed []string
	for _, r := range e.replicas.all {
		res := r.client.ResetCache(ctx, family)
		at := ""
		if e.replicas.multi() {
			at = r.name + ": "
		}
		parts = append(parts, at+res.Detail)
		if res.Outcome != client.CacheResetDone {
			outcome = client.CacheResetFailed
			failed = append(failed, at+res.Detail)
		}
	}
	detail := fmt.Sprintf("%s: %s: %s", pass, family, strings.Join(parts, "; "))
	rs.event(context.WithoutCancel(ctx), v.Name, results.EventCacheReset, time.Since(start).Nanoseconds(), detail)
	if outcome == client.CacheResetFailed {
		rs.logf("%s: warning: the engine's prompt cache was not reset before the %s: %s; the pass goes on with what it holds", v.Name, pass, strings.Join(failed, "; "))
		return client.CacheReset{Outcome: client.CacheResetFailed, Detail: strings.Join(failed, "; ")}.Column()
	}
	return outcome
}
