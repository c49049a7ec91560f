package pipeline

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/pipeline/client"
	"github.com/extractbench/extractbench/pipeline/family"
	"github.com/extractbench/extractbench/results"
)

// portProbeTimeout bounds the check that nothing answers on an engine's
// port before its start command runs.
const portProbeTimeout = 2 * time.Second

// checkPortFree refuses to start an engine on a port something already
// answers on: the start command would fail to bind and exit, while the
// other server answered /health and every request in its place. It names
// the port and what the server there serves.
func checkPortFree(ctx context.Context, v *extractbench.Variant, c *client.Client) error {
	u, err := url.Parse(v.Engine.URL)
	if err != nil {
		return &ConfigError{fmt.Errorf("variant %s: engine.url %q: %w", v.Name, v.Engine.URL, err)}
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"https": "443"}[u.Scheme]
		if port == "" {
			port = "80"
		}
	}
	addr := net.JoinHostPort(u.Hostname(), port)
	d := net.Dialer{Timeout: portProbeTimeout}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil // nothing listens: the start command may bind
	}
	conn.Close()
	what := "a server that gives no /v1/models list"
	mctx, cancel := context.WithTimeout(ctx, portProbeTimeout)
	defer cancel()
	if models, err := c.Models(mctx); err == nil {
		what = fmt.Sprintf("a server whose /v1/models lists %s", quoteList(models))
	}
	return &ConfigError{fmt.Errorf("variant %s: port %s (%s) already answers before the start command ran: %s; the engine to start (model %q) could not bind it, and that server would be measured in its place. Stop what listens on %s or give this variant another port",
		v.Name, port, addr, what, v.Engine.Model, addr)}
}

// checkServedModel makes sure the engine serves the protocol's model
// before any measured request: an engine that lists models without it
// would answer every request 404. An engine without /v1/models is let
// through with a warning.
func (rs *runState) checkServedModel(ctx context.Context, v *extractbench.Variant, r *replica) error {
	mctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	at := r.name
	if v.Engine.IsBuiltin() {
		at = redactURL(v.Engine.URL)
	}
	models, err := r.client.Models(mctx)
	switch {
	case errors.Is(err, client.ErrNotFound):
		rs.logf("%s: warning: the engine has no /v1/models; cannot check that it serves %q", v.Name, v.Engine.Model)
		return nil
	case errors.Is(err, client.ErrNoAnswer):
		rs.noAnswer(ctx, v, at, err.Error(), fmt.Sprintf("cannot check that it serves %q", v.Engine.Model))
		return nil
	case err != nil:
		return fmt.Errorf("variant %s: ask the engine at %s which models it serves: %w", v.Name, at, err)
	case !slices.Contains(models, v.Engine.Model):
		return fmt.Errorf("variant %s: the engine at %s serves %s, not the protocol's model %q: nothing was measured; fix engine.model or the engine",
			v.Name, at, quoteList(models), v.Engine.Model)
	}
	return nil
}

// noAnswer records a metadata call the engine at endpoint left without an
// answer past its deadline (client.ErrNoAnswer): a warning and an event;
// the run goes on without what the call would have said (so).
func (rs *runState) noAnswer(ctx context.Context, v *extractbench.Variant, endpoint, what, so string) {
	detail := fmt.Sprintf("%s: %s; %s", endpoint, what, so)
	rs.logf("%s: warning: the engine at %s", v.Name, detail)
	rs.event(context.WithoutCancel(ctx), v.Name, results.EventEngineCallTimeout, 0, detail)
}

func quoteList(s []string) string {
	if len(s) == 0 {
		return "no model"
	}
	q := make([]string, len(s))
	for i, x := range s {
		q[i] = fmt.Sprintf("%q", x)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// redactURL drops credentials from a URL written in a protocol.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = nil
	return u.String()
}

// familyState is the family of a variant's engine, learnt once, when the
// engine is described (pinEngine): its cache reset and its telemetry
// source come from it, and nothing asks the engine again.
type familyState struct {
	fam             *family.Family // nil until learnt
	how             string         // how it was learnt, for the events
	unsupportedSaid bool           // the variant's cache-reset-unsupported event is written
}

// learn sets the family: engine.kind when the protocol names it, else what
// the engine's answers name (client.EngineReport.Family), family.Generic
// when they name none.
func (s *familyState) learn(v *extractbench.Variant, info client.EngineReport) {
	switch {
	case v.Engine.Kind != "" && family.Known(v.Engine.Kind):
		s.fam, s.how = family.ByKind(v.Engine.Kind), "engine.kind "+v.Engine.Kind
	case v.Engine.Kind != "":
		s.fam, s.how = family.Generic, "engine.kind "+v.Engine.Kind+", a kind no engine family of extractbench describes"
	case info.Family == nil || info.Family.Kind == "":
		s.fam, s.how = family.Generic, "its kind is unknown: "+info.FamilyEvidence
	default:
		s.fam, s.how = info.Family, "detected "+info.Family.Kind+" ("+info.FamilyEvidence+")"
	}
}

// get is the family learnt, family.Generic before it is.
func (s *familyState) get() *family.Family {
	if s.fam == nil {
		return family.Generic
	}
	return s.fam
}

// exitNoticeWait is how long a failed request waits for the engine's exit
// to be seen before it is attributed: a crash refuses connections a moment
// before the process is reaped.
const exitNoticeWait = 2 * time.Second

// engineGone reports whether a transport failure is one a dead engine
// causes: no answer, or an answer cut. An HTTP status came from a live
// server, whose status and body say what happened; a timeout is our clock.
func engineGone(k extractbench.TransportKind) bool {
	switch k {
	case extractbench.TransportRefused, extractbench.TransportReset, extractbench.TransportCut, extractbench.TransportOther:
		return true
	}
	return false
}

// attribute decides whether a failed request failed because the engine
// crashed for want of memory (MEASUREMENT.md section 6) and returns the
// evidence either way, for the failure detail ("" when the engine is not
// in question). Memory needs evidence: an engine extractbench started and
// watches is memory only when its log, or for a SIGKILL the cgroup's
// oom_kill count or the kernel log, shows out of memory (EngineDied). An
// engine that died without it, or one it does not watch (a URL, a
// daemonised start) that stopped answering, is dead, not out of memory:
// deadEngine takes the request out of the measurement.
func (e *engine) attribute(tr extractbench.Transport) (extractbench.Transport, string) {
	if tr.Kind == extractbench.TransportOK || !engineGone(tr.Kind) {
		return tr, ""
	}
	if e.proc != nil && !e.proc.Daemonised() {
		exited, oom, evidence := e.proc.CrashEvidence(exitNoticeWait)
		if !exited {
			return tr, "" // still running: a transport failure of its own
		}
		tr.EngineDied = oom
		return tr, evidence
	}
	return tr, ""
}

// deadEngine takes a failed request out of the measurement when the engine
// died without memory evidence (killed from outside, restarting, gone):
// kind engine_dead, no failure class, sent again by -resume. The model is
// not judged on an engine that was not there.
func (e *engine) deadEngine(tr extractbench.Transport, evidence string) extractbench.Transport {
	if tr.Kind == extractbench.TransportOK || !engineGone(tr.Kind) || tr.EngineDied || !e.died() {
		return tr
	}
	why := e.deathDetail()
	if evidence != "" {
		why = evidence
	}
	tr.Detail = fmt.Sprintf("the engine died (%s) while this request was in flight: not a measurement; -resume sends it again (%s: %s)", why, tr.Kind, tr.Detail)
	tr.Kind = extractbench.TransportEngineDead
	return tr
}
