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

// resetCache empties the engine's prompt cache before a measured pass when
// the protocol says cache: reset (MEASUREMENT.md, "Caches between passes"),
// on every replica, the way the engine's family does (e.family, learnt when
// the engine was described), and returns the pass's cache_reset: "reset",
// "kept", "unsupported" or "failed: ...". Each reset asked is an event with
// the engine's answers; a family without one is an event once per variant.
// A reset that fails is a warning and the pass's label, never the run's end.
func (rs *runState) resetCache(ctx context.Context, v *extractbench.Variant, e *engine, level, rep int) string {
	if rs.proto.Cache == protocol.CacheKeep {
		return client.CacheKept
	}
	fam := e.family.get()
	pass := fmt.Sprintf("pass at level %d, repetition %d", level, rep)
	if !fam.CanReset() {
		if !e.family.unsupportedSaid {
			e.family.unsupportedSaid = true
			r := e.client.ResetCache(ctx, fam) // unsupported: nothing is sent
			rs.event(context.WithoutCancel(ctx), v.Name, results.EventCacheReset, 0,
				fmt.Sprintf("%s: %s (%s): every pass is measured with what the earlier ones cached; compare cached_prompt_share", pass, r.Detail, e.family.how))
		}
		return client.CacheResetUnsupported
	}
	start := time.Now()
	outcome := client.CacheResetDone
	var parts, failed []string
	for _, r := range e.replicas.all {
		res := r.client.ResetCache(ctx, fam)
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
	detail := fmt.Sprintf("%s: %s: %s", pass, fam.Kind, strings.Join(parts, "; "))
	rs.event(context.WithoutCancel(ctx), v.Name, results.EventCacheReset, time.Since(start).Nanoseconds(), detail)
	if outcome == client.CacheResetFailed {
		rs.logf("%s: warning: the engine's prompt cache was not reset before the %s: %s; the pass goes on with what it holds", v.Name, pass, strings.Join(failed, "; "))
		return client.CacheReset{Outcome: client.CacheResetFailed, Detail: strings.Join(failed, "; ")}.Column()
	}
	return outcome
}
