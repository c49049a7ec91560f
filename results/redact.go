package results

import (
	"io"
	"sync/atomic"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/redact"
)

// Redacted replaces a secret in everything a run writes.
const Redacted = redact.Redacted

// Secrets are the values a run must never write: the API keys of its
// variants and the credentials of their URLs, found in every form
// redact.Secrets knows (plain, JSON-escaped, percent-encoded, HTML
// references, base64) and replaced with Redacted. nil redacts nothing.
type Secrets struct{ m *redact.Secrets }

// NewSecrets returns the secrets among values (empty ones are left out).
func NewSecrets(values ...string) *Secrets { return &Secrets{redact.New(values...)} }

// Empty reports whether there is nothing to redact.
func (s *Secrets) Empty() bool { return s == nil || s.m.Empty() }

// Redact returns text with every secret replaced by Redacted.
func (s *Secrets) Redact(text string) string {
	if s == nil {
		return text
	}
	return s.m.Redact(text)
}

// Writer returns a writer to w that replaces every secret, even one split
// across writes (redact.Writer). Close writes what is held back; it does
// not close w.
func (s *Secrets) Writer(w io.Writer) *redact.Writer {
	if s == nil {
		return (*redact.Secrets)(nil).Writer(w)
	}
	return s.m.Writer(w)
}

// storeSecrets is the store's set, replaced as a whole (SetSecrets).
type storeSecrets struct{ p atomic.Pointer[Secrets] }

func (ss *storeSecrets) redact(text string) string { return ss.p.Load().Redact(text) }

// SetSecrets makes the store replace secrets (nil: none) in every text it
// writes from now on: a request's output, error body and details, event and
// decision details, run manifests. The client redacts what it can see;
// this is the last boundary before the disk, whatever path a secret took.
func (s *Store) SetSecrets(secrets *Secrets) { s.secrets.p.Store(secrets) }

// redactRecord is r with its texts redacted.
func (s *Store) redactRecord(r extractbench.Record) extractbench.Record {
	if s.secrets.p.Load().Empty() {
		return r
	}
	r.Output = s.secrets.redact(r.Output)
	r.ErrorBody = s.secrets.redact(r.ErrorBody)
	r.Detail = s.secrets.redact(r.Detail)
	r.FailureDetail = s.secrets.redact(r.FailureDetail)
	r.Endpoint = s.secrets.redact(r.Endpoint)
	for _, p := range []**string{&r.Prediction.Date, &r.Prediction.Amount, &r.Prediction.Category} {
		if *p != nil {
			v := s.secrets.redact(**p)
			*p = &v
		}
	}
	if r.Score.Fields != nil {
		fields := make([]extractbench.FieldScore, len(r.Score.Fields)) // the caller's record keeps its own
		for i, f := range r.Score.Fields {
			f.Got, f.Reason = s.secrets.redact(f.Got), s.secrets.redact(f.Reason)
			fields[i] = f
		}
		r.Score.Fields = fields
	}
	return r
}
