package pipeline

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/extractbench/extractbench/pipeline/client"
	"github.com/extractbench/extractbench/pipeline/family"
	"github.com/extractbench/extractbench/results"
)

// replicaIdentity is what one replica said it is: its family's identity
// (version, model, what else tells a build or a weights file apart) and
// the models it serves. Each part is read when the engine is pinned and
// again before every pass; a part no read has answered yet is unknown.
type replicaIdentity struct {
	id         family.Identity
	idKnown    bool
	models     []string // sorted; nil while unknown
	unreadSaid bool     // its engine_identity_unread event is written
}

// identityRead is one read of a replica's identity; an error leaves its
// part unknown.
type identityRead struct {
	id        family.Identity
	idErr     error
	models    []string
	modelsErr error
}

// pinIdentity reads each replica's identity when the engine is pinned:
// what the reads before each pass are compared with (checkIdentity).
func (e *engine) pinIdentity(ctx context.Context) {
	e.identities = make([]replicaIdentity, len(e.replicas.all))
	for i, r := range e.replicas.all {
		e.learnIdentity(ctx, i, r, e.readIdentity(ctx, r), "when the engine was pinned")
	}
}

// checkIdentity reads each live replica's identity again before a pass
// (when: "before the pass at level 2, repetition 1") and stops the variant
// when one answers as another engine (upgraded, or another model loaded
// under the run): an engine_changed event names the old and the new, and
// the returned error ends the variant as ERROR, as a dead engine's does;
// the passes measured before stay. A read that fails (no answer in time,
// an error) is a warning, never a change: only an engine that answers as
// another is another.
func (e *engine) checkIdentity(ctx context.Context, when string) error {
	for i, r := range e.replicas.all {
		if ctx.Err() != nil {
			return nil // interrupted: the pass is not sent either
		}
		if e.replicas.isDead(r) {
			continue
		}
		now := e.readIdentity(ctx, r)
		if ctx.Err() != nil {
			return nil
		}
		if diffs := e.identities[i].changes(now); len(diffs) > 0 {
			return e.changedError(ctx, r, when, diffs)
		}
		e.learnIdentity(ctx, i, r, now, when)
	}
	return nil
}

// readIdentity asks replica r its family's identity and the models it
// serves, each within the client's CallTimeout.
func (e *engine) readIdentity(ctx context.Context, r *replica) identityRead {
	var rd identityRead
	rd.id, rd.idErr = e.family.get().Identity(ctx, r.client)
	models, err := r.client.Models(ctx)
	if err == nil {
		rd.models = slices.Sorted(slices.Values(models))
	}
	rd.modelsErr = err
	return rd
}

// learnIdentity keeps what a read of replica i answered as its identity
// and says what it could not read (when: the read's moment): no answer in
// time is an engine_call_timeout event each time, as for every metadata
// call; any other failure an engine_identity_unread event, once per
// replica.
func (e *engine) learnIdentity(ctx context.Context, i int, r *replica, rd identityRead, when string) {
	ri := &e.identities[i]
	if rd.idErr == nil {
		ri.id, ri.idKnown = rd.id, true
	}
	if rd.modelsErr == nil {
		ri.models = rd.models
	}
	so := "the engine's identity is not compared " + when + "; the variant goes on"
	modelsErr := rd.modelsErr
	if errors.Is(modelsErr, client.ErrNotFound) {
		modelsErr = nil // no /v1/models: warned of when the protocol's model was checked
	}
	var unread []string
	for _, err := range []error{rd.idErr, modelsErr} {
		switch {
		case err == nil:
		case errors.Is(err, client.ErrNoAnswer):
			e.rs.noAnswer(ctx, e.v, r.name, err.Error(), so)
		default:
			unread = append(unread, err.Error())
		}
	}
	if len(unread) > 0 && !ri.unreadSaid {
		ri.unreadSaid = true
		detail := fmt.Sprintf("%s: %s: %s; a change of engine under the run is seen only in what it does answer", r.name, when, strings.Join(unread, "; "))
		e.rs.logf("%s: warning: the engine's identity could not be read at %s", e.v.Name, detail)
		e.rs.event(context.WithoutCancel(ctx), e.v.Name, results.EventEngineIdentityUnread, 0, detail)
	}
}

// changes lists how a read differs from the identity known so far
// ("version 0.9.0 → 0.10.0"). A part either side does not know is no
// change: an Ollama whose model was unloaded after keep_alive names no
// model, and an endpoint that failed once says nothing.
func (ri *replicaIdentity) changes(now identityRead) []string {
	var out []string
	diff := func(what, old, new string) {
		if old != "" && new != "" && old != new {
			out = append(out, fmt.Sprintf("%s %s → %s", what, old, new))
		}
	}
	if ri.idKnown && now.idErr == nil {
		diff("version", ri.id.Version, now.id.Version)
		diff("model", ri.id.Model, now.id.Model)
		for _, k := range slices.Sorted(maps.Keys(ri.id.Extra)) {
			diff(k, ri.id.Extra[k], now.id.Extra[k])
		}
	}
	if ri.models != nil && now.modelsErr == nil && !slices.Equal(ri.models, now.models) {
		out = append(out, fmt.Sprintf("served models %s → %s", quoteList(ri.models), quoteList(now.models)))
	}
	return out
}

// changedError records that replica r answered as another engine (diffs)
// and returns the variant's error, worded as a resume in another
// environment is refused: results of two engines are never mixed.
func (e *engine) changedError(ctx context.Context, r *replica, when string, diffs []string) error {
	detail := fmt.Sprintf("the engine at %s changed under the run %s (%s): results of a different engine are never mixed; the passes measured before stay, no further pass or retry against it",
		r.name, when, strings.Join(diffs, "; "))
	e.rs.event(context.WithoutCancel(ctx), e.v.Name, results.EventEngineChanged, 0, detail)
	return fmt.Errorf("engine changed: %s", detail)
}
