package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/pipeline/client"
)

// replicaHealthTimeout bounds the health check that decides whether a
// replica whose request failed in transport is dead.
const replicaHealthTimeout = 2 * time.Second

// replica is one endpoint of a variant's engine: the engine itself, or one
// of the replicas engine.urls lists.
type replica struct {
	index  int
	name   string // the URL as the protocol writes it (credentials removed), or "builtin"
	url    string // the base URL requests go to
	client *client.Client

	// Guarded by replicaSet.mu.
	inFlight int
	suspect  bool   // a request failed in transport; its health is being checked
	dead     bool   // it stopped answering: no more work goes to it
	death    string // how it was found dead
}

// replicaSet dispatches a variant's requests over its replicas: each one
// to the least-loaded live replica (pickReplica). The level of a pass is the
// total in flight over all of them; the dispatchers keep it, the set only
// says where each request goes.
type replicaSet struct {
	mu   sync.Mutex
	all  []*replica
	next int // where ties start looking: round robin among equally loaded replicas
}

func newReplicaSet(rs []*replica) *replicaSet {
	for i, r := range rs {
		r.index = i
	}
	return &replicaSet{all: rs}
}

// multi reports whether the engine has more than one replica: only then is
// a replica that stops answering dropped from dispatch (one engine that
// stops answering is the variant's failure, as before replicas).
func (s *replicaSet) multi() bool { return len(s.all) > 1 }

// pickReplica returns the index of the replica to send the next request to:
// among the usable ones, the fewest in flight; ties go to the first at or
// after start (round robin), so that equally loaded replicas take turns.
// -1 when none is usable.
func pickReplica(inFlight []int, usable []bool, start int) int {
	best, n := -1, len(inFlight)
	for k := range n {
		i := (start + k) % n
		if usable[i] && (best < 0 || inFlight[i] < inFlight[best]) {
			best = i
		}
	}
	return best
}

// acquire picks the replica for n requests (a batch is n on one replica)
// and counts them in flight there: a live replica that is not under
// suspicion, else (every live one is) any live one. nil when every replica
// is dead.
func (s *replicaSet) acquire(n int) *replica {
	s.mu.Lock()
	defer s.mu.Unlock()
	inFlight := make([]int, len(s.all))
	healthy := make([]bool, len(s.all))
	live := make([]bool, len(s.all))
	for i, r := range s.all {
		inFlight[i], live[i], healthy[i] = r.inFlight, !r.dead, !r.dead && !r.suspect
	}
	i := pickReplica(inFlight, healthy, s.next)
	if i < 0 {
		i = pickReplica(inFlight, live, s.next)
	}
	if i < 0 {
		return nil
	}
	s.next = (i + 1) % len(s.all)
	r := s.all[i]
	r.inFlight += n
	return r
}

// release counts n requests of r done.
func (s *replicaSet) release(r *replica, n int) {
	s.mu.Lock()
	r.inFlight -= n
	s.mu.Unlock()
}

// allDead reports whether no replica is left to send to.
func (s *replicaSet) allDead() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.all {
		if !r.dead {
			return false
		}
	}
	return true
}

// isDead reports whether r stopped answering.
func (s *replicaSet) isDead(r *replica) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return r.dead
}

// names are the replicas' names, in the protocol's order.
func (s *replicaSet) names() []string {
	out := make([]string, len(s.all))
	for i, r := range s.all {
		out[i] = r.name
	}
	return out
}

// deathOf says how r was found dead ("" while it answers).
func (s *replicaSet) deathOf(r *replica) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return r.death
}

// failed is told of a request to r that failed in transport in a way a dead
// engine causes (refused, reset, cut). r takes no new request while its
// health is checked; if it does not answer it is dead, and dead reports
// true exactly once, to the caller that should record it. With one replica
// that is the engine's death (engine.died): its requests stop at once,
// rather than each document being refused in a millisecond.
func (s *replicaSet) failed(ctx context.Context, r *replica, tr extractbench.Transport) (dead bool, detail string) {
	if tr.Kind == extractbench.TransportOK || !engineGone(tr.Kind) {
		return false, ""
	}
	s.mu.Lock()
	if r.dead {
		s.mu.Unlock()
		return false, ""
	}
	r.suspect = true
	s.mu.Unlock()
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), replicaHealthTimeout)
	err := r.client.Health(hctx)
	cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	r.suspect = false
	if err == nil || r.dead {
		return false, ""
	}
	r.dead = true
	r.death = fmt.Sprintf("%s stopped answering (a request failed: %s %s; then %v)", r.name, tr.Kind, tr.Detail, err)
	var live []string
	for _, x := range s.all {
		if !x.dead {
			live = append(live, x.name)
		}
	}
	detail = fmt.Sprintf("replica %s stopped answering (a request failed: %s %s; then %v): no further request goes to it", r.name, tr.Kind, tr.Detail, err)
	if len(live) > 0 {
		detail += "; the requests go to the live replicas: " + strings.Join(live, ", ")
	} else {
		detail += "; no replica is left"
	}
	return true, detail
}

// redactURLs is redactURL of each; nil for none.
func redactURLs(urls []string) []string {
	var out []string
	for _, u := range urls {
		out = append(out, redactURL(u))
	}
	return out
}

// sameEngine refuses replicas that are not one engine: each must report
// the version and served models the first one reports (first), since the
// manifest pins one engine per variant and the figures of different
// engines are never mixed.
func sameEngine(ctx context.Context, v *extractbench.Variant, e *engine, first client.EngineReport) error {
	want := strings.Join(slices.Sorted(slices.Values(first.ServedModels)), ",")
	for _, r := range e.replicas.all[1:] {
		got := r.client.Describe(ctx)
		var diffs []string
		if got.Version != first.Version {
			diffs = append(diffs, fmt.Sprintf("version %q, not %q", got.Version, first.Version))
		}
		if have := strings.Join(slices.Sorted(slices.Values(got.ServedModels)), ","); have != want {
			diffs = append(diffs, fmt.Sprintf("served models [%s], not [%s]", have, want))
		}
		if got.File != first.File {
			diffs = append(diffs, fmt.Sprintf("served file %s, not %s", fileText(got.File), fileText(first.File)))
		}
		if len(diffs) > 0 {
			return &ConfigError{fmt.Errorf("variant %s: replica %s is not the engine %s is: it reports %s; the replicas of one variant must run one engine and model (make them alike, or measure each as its own variant)",
				v.Name, r.name, e.replicas.all[0].name, strings.Join(diffs, "; "))}
		}
	}
	return nil
}

// replicaNames are the names of a variant's replicas, as its rows record
// them: the URLs of engine.urls (credentials removed), or builtin/1 ...
// builtin/N for engine.replicas; nil for one engine.
func replicaNames(e extractbench.Engine) []string {
	if e.IsBuiltin() && e.Replicas > 1 {
		out := make([]string, e.Replicas)
		for i := range out {
			out[i] = fmt.Sprintf("%s/%d", e.URL, i+1)
		}
		return out
	}
	return redactURLs(e.URLs)
}
