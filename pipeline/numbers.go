package pipeline

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/pipeline/telemetry"
	"github.com/extractbench/extractbench/results"
)

// refusedUsage collects, per pass, the usages refused at the record
// boundary (eval.RefuseImpossibleUsage), so that the pass records
// one event rather than one per request. The zero value is ready.
type refusedUsage struct {
	mu     sync.Mutex
	byPass map[extractbench.PassKey]*usageRefusals
}

type usageRefusals struct {
	n     int
	first string
}

// note counts rec's refused usage, if any, against its pass.
func (u *refusedUsage) note(key extractbench.PassKey, rec *extractbench.Record) {
	if rec.UsageRefused == "" {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.byPass == nil {
		u.byPass = map[extractbench.PassKey]*usageRefusals{}
	}
	r := u.byPass[key]
	if r == nil {
		r = &usageRefusals{first: rec.UsageRefused}
		u.byPass[key] = r
	}
	r.n++
}

// take returns the pass's refusals and forgets them.
func (u *refusedUsage) take(key extractbench.PassKey) *usageRefusals {
	u.mu.Lock()
	defer u.mu.Unlock()
	r := u.byPass[key]
	delete(u.byPass, key)
	return r
}

// numbersRefused says, on stderr and as one event, which engine numbers of
// the pass were refused as impossible: usages of its requests, values of
// its /metrics scrapes. The figures they would have made are NULL.
func (rs *runState) numbersRefused(ctx context.Context, v *extractbench.Variant, key extractbench.PassKey, tel telemetry.Telemetry) {
	var parts []string
	if u := rs.refusedUsage.take(key); u != nil {
		parts = append(parts, fmt.Sprintf("%d requests sent an impossible usage (first: %s), counted as without usage", u.n, u.first))
	}
	for _, name := range slices.Sorted(maps.Keys(tel.Refused)) {
		r := tel.Refused[name]
		parts = append(parts, fmt.Sprintf("/metrics %s impossible in %d scrapes (first: %s)", name, r.Scrapes, strconv.FormatFloat(r.First, 'g', -1, 64)))
	}
	if len(parts) == 0 {
		return
	}
	detail := fmt.Sprintf("pass at level %d, repetition %d: %s", key.Level, key.Repetition, strings.Join(parts, "; "))
	rs.logf("%s: warning: engine numbers refused: %s", v.Name, detail)
	rs.event(ctx, v.Name, results.EventEngineNumbersRefused, 0, detail)
}
