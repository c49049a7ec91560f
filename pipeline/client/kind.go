package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/extractbench/extractbench/pipeline/family"
)

// Detection is what DetectKind found: the engine's family (family.Generic
// when no answer named one, Kind "" then), the answer that told it, and the
// models /v1/models lists.
type Detection struct {
	Kind     string
	Family   *family.Family
	Evidence string // "GET /v1/models: owned_by \"vllm\"", or why nothing was detected
	Models   []string
}

// DetectKind asks the engine what it is: the owned_by of GET /v1/models,
// then the endpoints only one family answers so (family.Probes). An engine
// that answers none of them is of unknown kind (Kind ""), not an error; an
// engine that does not answer /v1/models at all (refused, a timeout, a
// non-2xx other than 404) is an error: nothing to measure there.
func (c *Client) DetectKind(ctx context.Context) (Detection, error) {
	m, err := c.models(ctx)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return Detection{}, err
	}
	return c.detect(ctx, m, err != nil, c.newProbes(nil)), nil
}

// detect names the family from a /v1/models list (listed false: the
// engine has none) and, when its owned_by names none, the family probes.
func (c *Client) detect(ctx context.Context, m modelList, unlisted bool, p *probes) Detection {
	d := Detection{Models: m.ids(), Family: family.Generic}
	for _, x := range m.Data {
		if f := family.ByOwnedBy(x.OwnedBy); f != nil {
			d.Kind, d.Family, d.Evidence = f.Kind, f, fmt.Sprintf("GET /v1/models: owned_by %q", x.OwnedBy)
			return d
		}
	}
	asked := []string{"/v1/models owned_by"}
	if unlisted {
		asked[0] = "/v1/models (not found)"
	}
	for _, pf := range family.Probes() {
		if ctx.Err() != nil {
			break
		}
		if !slices.Contains(asked, pf.Path) {
			asked = append(asked, pf.Path)
		}
		if a := p.object(ctx, pf.Path); a != nil && pf.Match(a) {
			d.Kind, d.Family, d.Evidence = pf.Family.Kind, pf.Family, "GET "+pf.Path
			return d
		}
	}
	d.Evidence = "no answer names the engine (asked " + strings.Join(asked, ", ") + ")"
	return d
}

// probes asks GET paths of one engine once each, for the detection and
// the version read that follows it; missed, when set, is told every call
// that went unanswered.
type probes struct {
	c      *Client
	got    map[string]probeAnswer
	missed func(error)
}

type probeAnswer struct {
	body []byte
	err  error
}

func (c *Client) newProbes(missed func(error)) *probes {
	return &probes{c: c, got: map[string]probeAnswer{}, missed: missed}
}

// get is the answer of GET path (a 2xx body, or why not), asked once.
func (p *probes) get(ctx context.Context, path string) ([]byte, error) {
	if a, ok := p.got[path]; ok {
		return a.body, a.err
	}
	b, err := p.c.call(ctx, http.MethodGet, path)
	p.got[path] = probeAnswer{b, err}
	if err != nil && p.missed != nil {
		p.missed(err)
	}
	return b, err
}

// object is GET path's JSON object answer; nil when there is none.
func (p *probes) object(ctx context.Context, path string) map[string]json.RawMessage {
	b, err := p.get(ctx, path)
	if err != nil {
		return nil
	}
	var a map[string]json.RawMessage
	_ = json.Unmarshal(b, &a) // not a JSON object: matches nothing
	return a
}
