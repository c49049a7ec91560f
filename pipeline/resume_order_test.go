package pipeline

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results"
)

// TestResume_BeforeSendOrder: a run measured before sweep.order (its
// manifest's sweep has no order) is refused with a reason a user can act
// on, not only two fingerprints; a run of another fingerprint that has an
// order is refused without that reason.
func TestResume_BeforeSendOrder(t *testing.T) {
	for _, tc := range []struct {
		order string
		why   bool
	}{
		{"", true},
		{extractbench.OrderCorpus, false},
		{extractbench.OrderShuffle, false},
	} {
		old, err := json.Marshal(extractbench.Manifest{Sweep: extractbench.Sweep{Mode: extractbench.ModeConcurrency, Levels: []int{1}, Order: tc.order}})
		if err != nil {
			t.Fatal(err)
		}
		rs := &runState{manifest: &extractbench.Manifest{Fingerprint: "new"}, opts: Options{OutDir: "out"}}
		err = rs.resume(context.Background(), &results.Run{RunID: "r", Fingerprint: "old", Manifest: old})
		if err == nil {
			t.Fatalf("order %q: resumed a run of another fingerprint", tc.order)
		}
		if got := strings.Contains(err.Error(), "before sweep.order existed"); got != tc.why {
			t.Errorf("order %q: %v; want the reason given: %v", tc.order, err, tc.why)
		}
	}
}
