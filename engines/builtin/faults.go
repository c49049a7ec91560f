package builtin

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/extractbench/extractbench"
)

// Fault is a failure the engine injects on purpose, so that tests (and the
// runner's end-to-end tests) can cause every failure class of MEASUREMENT.md.
type Fault string

// The faults, with the failure class each one causes.
const (
	FaultNone         Fault = ""
	FaultGarbage      Fault = "garbage"       // format: prose, no JSON at all
	FaultFence        Fault = "fence"         // format under strict parsing: the object in a ```json fence
	FaultMissingKey   Fault = "missing_key"   // format: the object lacks "category"
	FaultStringAmount Fault = "string_amount" // format: "amount" is a JSON string
	FaultWrongValue   Fault = "wrong_value"   // quality: a decoy amount and a date off by a day
	FaultTruncate     Fault = "truncate"      // truncation: the JSON cut halfway, finish_reason "length"
	FaultOOM          Fault = "oom"           // memory: HTTP 500 "CUDA out of memory"
	FaultReset        Fault = "reset"         // error: the connection is reset halfway through the answer
	FaultHTML         Fault = "html"          // error: HTTP 200 with an HTML page (a proxy's)
)

// faults lists every fault in the order rates are drawn, with the failure
// class it causes (under strict parsing), which the runner's tests check
// the classifier gives it. A failure class no fault causes is not caused:
// a new class needs no fault.
var faults = []struct {
	fault Fault
	class extractbench.Failure
}{
	{FaultGarbage, extractbench.Format},
	{FaultFence, extractbench.Format},
	{FaultMissingKey, extractbench.Format},
	{FaultStringAmount, extractbench.Format},
	{FaultWrongValue, extractbench.Quality},
	{FaultTruncate, extractbench.Truncation},
	{FaultOOM, extractbench.Memory},
	{FaultReset, extractbench.Error},
	{FaultHTML, extractbench.Error},
}

// FaultKinds lists every fault in the order rates are drawn.
var FaultKinds = func() []Fault {
	kinds := make([]Fault, len(faults))
	for i, f := range faults {
		kinds[i] = f.fault
	}
	return kinds
}()

// Class is the failure class f causes under strict parsing; None for
// FaultNone or an unknown fault.
func (f Fault) Class() extractbench.Failure {
	for _, x := range faults {
		if x.fault == f {
			return x.class
		}
	}
	return extractbench.None
}

// FaultRule injects a fault into every document whose text contains Contains.
type FaultRule struct {
	Contains string
	Fault    Fault
}

// ParseFaults reads a fault-rate list such as "garbage=0.02,oom=0.005", the
// form the engine's command-line flag takes.
func ParseFaults(spec string) (map[Fault]float64, error) {
	rates := map[Fault]float64{}
	if strings.TrimSpace(spec) == "" {
		return rates, nil
	}
	for _, kv := range strings.Split(spec, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return nil, fmt.Errorf("parse faults %q: %q is not name=rate", spec, kv)
		}
		f := Fault(name)
		if !validFault(f) {
			return nil, fmt.Errorf("parse faults %q: unknown fault %q; known: %v", spec, name, FaultKinds)
		}
		r, err := strconv.ParseFloat(value, 64)
		if err != nil || r < 0 || r > 1 {
			return nil, fmt.Errorf("parse faults %q: rate of %s must be a number in [0,1]", spec, name)
		}
		rates[f] = r
	}
	return rates, nil
}

func validFault(f Fault) bool {
	for _, k := range FaultKinds {
		if k == f {
			return true
		}
	}
	return false
}

// chooseFault returns the fault of one document: the first matching rule,
// else one draw per (seed, document) against the cumulative rates, so that a
// document fails the same way on every pass and every level.
func chooseFault(cfg *Config, doc, hash string) Fault {
	for _, r := range cfg.FaultRules {
		if r.Contains != "" && strings.Contains(doc, r.Contains) {
			return r.Fault
		}
	}
	if len(cfg.FaultRates) == 0 {
		return FaultNone
	}
	u := unit("fault", cfg.Seed, hash)
	acc := 0.0
	for _, f := range FaultKinds {
		acc += cfg.FaultRates[f]
		if u < acc {
			return f
		}
	}
	return FaultNone
}

// faultAnswer rewrites the answer of a document for a content fault.
func faultAnswer(f Fault, ex Extraction) string {
	switch f {
	case FaultGarbage:
		return proseAnswer(ex)
	case FaultFence:
		return answerJSON(ex, perturbFence)
	case FaultStringAmount:
		if ex.Amount == nil {
			c := Cents(0)
			ex.Amount = &c
		}
		return answerJSON(ex, perturbStringAmount)
	case FaultMissingKey:
		s := answerJSON(ex, perturbNone)
		i := strings.LastIndex(s, `, "category"`)
		return s[:i] + "}"
	case FaultWrongValue:
		if ex.Date == nil {
			d := "2025-01-01"
			ex.Date = &d
		}
		if ex.AltAmount == nil {
			c := Cents(100)
			if ex.Amount != nil {
				c = *ex.Amount + 100
			}
			ex.AltAmount = &c
		}
		ex.Amount = ex.AltAmount
		return answerJSON(ex, perturbDate)
	}
	return answerJSON(ex, perturbNone)
}

// htmlPage is what a proxy in front of a dead engine answers with a 200.
const htmlPage = `<!DOCTYPE html>
<html><head><title>502 Bad Gateway</title></head>
<body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>
`
