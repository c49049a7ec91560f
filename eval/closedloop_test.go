package eval

import (
	"math"
	"math/rand/v2"
)

// A closed-loop continuous-batching engine, simulated, for the steady-state
// calibration (steady_calibration_test.go): c clients each send their next
// document when their last one is answered; the engine admits what waits at
// each step, whose time is the prefill of the prompts admitted plus one
// decode step that grows with the running batch (the built-in engine's
// model, engines/builtin/scheduler.go), so that a request's E2E depends on
// who else is running: long prompts admitted beside it stall its decoding.

// simEngine is the modelled hardware, ns.
type simEngine struct {
	name                 string
	prefillPerToken      float64
	stepBase, stepPerSeq float64
}

// The engines the controls run on: an 8B model on an L4 (the built-in
// engine's defaults), a fast card, and the built-in engine at time_scale
// 0.05, whose requests take tens of milliseconds, so that a 0.5 s host
// stall is ten of them.
var simEngines = []simEngine{
	{"l4", 1e9 / 5000, 25e6, 0.3e6},
	{"h200", 1e9 / 20000, 8e6, 0.1e6},
	{"scaled", 0.05 * 1e9 / 5000, 0.05 * 25e6, 0.05 * 0.3e6},
}

// simDoc is one document: its length class, prompt and answer tokens.
type simDoc struct {
	class       string
	prompt, out int
}

// simCorpus is a corpus like corpus/default: 300 documents whose first
// third holds twice the long share of its last (21, 17 and 12 long
// documents by third), each third's order drawn from rng.
func simCorpus(rng *rand.Rand) []simDoc {
	thirds := [][3]int{{27, 52, 21}, {29, 54, 17}, {44, 44, 12}} // short, usual, long
	var out []simDoc
	for _, th := range thirds {
		var part []simDoc
		for class, n := range th {
			for range n {
				d := simDoc{out: 25 + rng.IntN(46)}
				switch class {
				case 0:
					d.class, d.prompt = "short", 600+80+rng.IntN(220)
				case 1:
					d.class, d.prompt = "usual", 600+300+rng.IntN(1200)
				default:
					d.class, d.prompt, d.out = "long", 600+5500+rng.IntN(2000), d.out+10
				}
				part = append(part, d)
			}
		}
		rng.Shuffle(len(part), func(i, j int) { part[i], part[j] = part[j], part[i] })
		out = append(out, part...)
	}
	return out
}

// The send orders of a pass.
const (
	orderOriginal = "original"
	orderShuffled = "shuffled"
	orderReversed = "reversed"
)

func ordered(docs []simDoc, order string, rng *rand.Rand) []simDoc {
	out := append([]simDoc(nil), docs...)
	switch order {
	case orderShuffled:
		rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	case orderReversed:
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out
}

// simHost is the machine's load: every step's time is jittered a few
// percent; under load, a step starts a burst with probability burstP, and
// the burst's 1 to 4 steps have their decode part (the step's own cost
// without the prefill of the prompts it admits) 10 to 30 times as long: a
// shared machine's scheduler starving the engine, for as long as the
// engine's host work takes, not the GPU's prefill (a burst that multiplied
// the 10-40 s prefill of a first wave of 64 prompts froze the engine for
// minutes, and passed for warming in 2% of the levels at c = 64); stall is
// one freeze of stallNS, after a random share of the pass's requests have
// been answered.
type simHost struct {
	name    string
	burstP  float64
	stallNS float64
}

var simHosts = []simHost{
	{"idle", 0, 0},
	{"loaded", 0.003, 0},
	{"stall", 0, 0.5e9},
	{"loaded+stall", 0.003, 0.5e9},
}

// simState is the engine across the passes of a run: what it has finished
// (a warming engine warms on it) and how much a step costs for that.
type simState struct {
	finished int
	warming  func(finished int) float64 // step time factor; nil: stateless
}

type simReq struct {
	doc  simDoc
	send float64
	left int
}

// simulatePass runs one closed-loop pass of docs at concurrency c and
// returns its requests as the steady-state test reads them.
func simulatePass(rng *rand.Rand, eng simEngine, host simHost, st *simState, docs []simDoc, c int) []SteadyRequest {
	out := make([]SteadyRequest, 0, len(docs))
	var waiting, running []*simReq
	next := 0
	send := func(at float64) {
		if next < len(docs) {
			waiting = append(waiting, &simReq{doc: docs[next], send: at, left: docs[next].out})
			next++
		}
	}
	for range c {
		send(0)
	}
	stallAfter := -1
	if host.stallNS > 0 {
		stallAfter = rng.IntN(len(docs))
	}
	t, burst, burstF, answered := 0.0, 0, 1.0, 0
	for len(waiting)+len(running) > 0 {
		prefill := 0
		for _, w := range waiting {
			prefill += w.doc.prompt
		}
		running = append(running, waiting...)
		waiting = waiting[:0]
		decode := eng.stepBase + float64(len(running))*eng.stepPerSeq
		d := float64(prefill)*eng.prefillPerToken + decode
		if st.warming != nil {
			d *= st.warming(st.finished)
		}
		d *= math.Exp(0.05 * rng.NormFloat64())
		if burst == 0 && host.burstP > 0 && rng.Float64() < host.burstP {
			burst, burstF = 1+rng.IntN(4), 10+20*rng.Float64()
		}
		if burst > 0 {
			d += (burstF - 1) * decode // the host's share of a step, not the prefill's compute
			burst--
		}
		if answered == stallAfter {
			d += host.stallNS
			stallAfter = -1
		}
		t += d
		keep := running[:0]
		for _, r := range running {
			if r.left--; r.left > 0 {
				keep = append(keep, r)
				continue
			}
			out = append(out, SteadyRequest{Class: r.doc.class, SendNS: int64(r.send), E2ENS: int64(t - r.send)})
			st.finished++
			answered++
			send(t + 50e3) // the client's own turnaround, 50 µs
		}
		running = keep
	}
	return out
}
