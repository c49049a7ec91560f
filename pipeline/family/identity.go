package family

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Identity is what an engine says it is: a run reads it when the engine
// is up and may read it again between passes, and a different answer is
// a different engine (upgraded, or another model loaded) under the run.
type Identity struct {
	Version string // "0.11.0", "b4567-1a2b3c4"; "" when it says none
	Source  string // the endpoint Version came from
	// Model is the model the engine says it serves or holds loaded ("" when
	// it says none).
	Model string
	// Extra is what else tells one build or one model file apart (TGI's
	// model_sha, Ollama's digest, llama.cpp's n_ctx), by the engine's key.
	Extra map[string]string
}

// ErrNoIdentity says the engine answered none of the family's identity
// endpoints with what they should hold.
var ErrNoIdentity = errors.New("the engine does not say what it is")

// Identity asks the engine, through c, what it is, by the family's own
// endpoints (the generic family asks every family's version endpoint).
// An error is an engine that did not answer, or answered nothing usable.
func (f *Family) Identity(ctx context.Context, c Caller) (Identity, error) {
	if f.identify == nil {
		return Identity{}, fmt.Errorf("%s: %w", f.Label(), ErrNoIdentity)
	}
	id, err := f.identify(ctx, c)
	if err != nil {
		return id, fmt.Errorf("identify %s: %w", f.Label(), err)
	}
	return id, nil
}

// getObject asks GET path and decodes its JSON object answer.
func getObject(ctx context.Context, c Caller, path string) (map[string]json.RawMessage, error) {
	status, body, err := c.Ask(ctx, http.MethodGet, path)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %w", path, errors.New(Answer(c, http.MethodGet, path, status, body, nil)))
	}
	var a map[string]json.RawMessage
	if err := json.Unmarshal(body, &a); err != nil || a == nil {
		return nil, fmt.Errorf("GET %s: not a JSON object: %s: %w", path, c.Clean(short(string(body), maxAnswerDetail)), ErrNoIdentity)
	}
	return a, nil
}

// fieldsIdentity is the identity read from one endpoint's JSON object:
// the version from the first of versionKeys it holds, the model from
// modelKey, and extraKeys as they are (numbers as written).
func fieldsIdentity(path string, versionKeys []string, modelKey string, extraKeys ...string) func(context.Context, Caller) (Identity, error) {
	return func(ctx context.Context, c Caller) (Identity, error) {
		a, err := getObject(ctx, c, path)
		if err != nil {
			return Identity{}, err
		}
		id := Identity{Source: path}
		for _, k := range versionKeys {
			if v := stringOf(a[k]); v != "" {
				id.Version = c.Clean(v)
				break
			}
		}
		if id.Version == "" {
			return id, fmt.Errorf("GET %s: no %s: %w", path, strings.Join(versionKeys, " or "), ErrNoIdentity)
		}
		id.Model = c.Clean(stringOf(a[modelKey]))
		id.Extra = extras(c, a, extraKeys...)
		return id, nil
	}
}

// extras are the values of keys in a, strings unquoted and other JSON as
// written; nil when a holds none.
func extras(c Caller, a map[string]json.RawMessage, keys ...string) map[string]string {
	var out map[string]string
	for _, k := range keys {
		raw, ok := a[k]
		if !ok || string(raw) == "null" {
			continue
		}
		v := stringOf(raw)
		if v == "" {
			v = string(raw)
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k] = c.Clean(short(v, maxAnswerDetail))
	}
	return out
}
