package protocol

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
)

const validSweep = "sweep: {mode: concurrency, levels: [1, 4], repetitions: 2}"

// withSweep is validProtocol with its sweep line replaced.
func withSweep(sweep string) []byte {
	return []byte(strings.Replace(validProtocol, validSweep, sweep, 1))
}

// TestParseProtocol_Order: sweep.order defaults to shuffle, takes corpus,
// and refuses anything else naming the file, line and field.
func TestParseProtocol_Order(t *testing.T) {
	for _, tc := range []struct {
		sweep, want string
	}{
		{validSweep, extractbench.OrderShuffle},
		{"sweep: {mode: concurrency, levels: [1, 4], repetitions: 2, order: shuffle}", extractbench.OrderShuffle},
		{"sweep: {mode: concurrency, levels: [1, 4], repetitions: 2, order: corpus}", extractbench.OrderCorpus},
		{"sweep: {mode: rate, levels: [4], order: corpus}", extractbench.OrderCorpus},
	} {
		p, err := Parse(withSweep(tc.sweep), "p.yaml", ".")
		if err != nil {
			t.Fatalf("%s: %v", tc.sweep, err)
		}
		if p.Sweep.Order != tc.want || p.Sweep.Shuffled() != (tc.want == extractbench.OrderShuffle) {
			t.Errorf("%s: order %q (shuffled %v), want %q", tc.sweep, p.Sweep.Order, p.Sweep.Shuffled(), tc.want)
		}
	}
	_, err := Parse(withSweep("sweep: {mode: concurrency, levels: [1, 4], order: random}"), "p.yaml", ".")
	if err == nil || !strings.Contains(err.Error(), "p.yaml:7: sweep.order") || !strings.Contains(err.Error(), "shuffle") {
		t.Errorf("order: random: got %v, want an error at p.yaml:7 naming sweep.order and its values", err)
	}
}

// TestParseProtocol_OrderFingerprint: the order is part of what a run's
// fingerprint covers (it changes what a pass measures): the canonical
// protocol writes it, whichever it is, and reads back as the same order and
// fingerprint (a resume without -protocol parses it again).
func TestParseProtocol_OrderFingerprint(t *testing.T) {
	fingerprints := map[string]string{}
	for _, order := range []string{extractbench.OrderShuffle, extractbench.OrderCorpus} {
		p, err := Parse(withSweep("sweep: {mode: concurrency, levels: [1, 4], repetitions: 2, order: "+order+"}"), "p.yaml", ".")
		if err != nil {
			t.Fatal(err)
		}
		var canon struct {
			Sweep struct{ Order string } `json:"sweep"`
		}
		if err := json.Unmarshal(p.Canonical(), &canon); err != nil || canon.Sweep.Order != order {
			t.Errorf("order %s: canonical protocol %s (%v), want sweep.order %q written", order, p.Canonical(), err, order)
		}
		fp := extractbench.Fingerprint(&extractbench.Manifest{Protocol: p.Canonical()})
		again, err := Parse(p.Canonical(), "p.yaml (from run r)", ".")
		if err != nil {
			t.Fatal(err)
		}
		if again.Sweep.Order != order || extractbench.Fingerprint(&extractbench.Manifest{Protocol: again.Canonical()}) != fp {
			t.Errorf("order %s: read back as %q, or another fingerprint", order, again.Sweep.Order)
		}
		fingerprints[order] = fp
	}
	if fingerprints[extractbench.OrderShuffle] == fingerprints[extractbench.OrderCorpus] {
		t.Error("shuffle and corpus order share a fingerprint")
	}
}
