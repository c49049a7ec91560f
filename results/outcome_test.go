package results

import (
	"testing"

	"github.com/extractbench/extractbench"
)

// TestVariantFailure_Attempts checks which variant_failed events make a
// variant's state: those of its last attempt only. A resume ends the
// failures before it (they stay as events, history); in a merged run a
// shard's resume ends that shard's failures, not another shard's.
func TestVariantFailure_Attempts(t *testing.T) {
	fail := func(detail string) Event { return Event{Kind: EventVariantFail, Variant: "v", Detail: detail} }
	resumed := func(detail string) Event { return Event{Kind: EventResumed, Detail: detail} }
	tests := []struct {
		name   string
		merged bool
		events []Event
		want   string
	}{
		{"failed", false, []Event{fail("disk is full")}, "disk is full"},
		{"failed, resumed", false, []Event{fail("disk is full"), resumed(`previous status "failed"`)}, ""},
		{"failed, resumed, failed again", false, []Event{fail("disk is full"), resumed(`previous status "failed"`), fail("engine died")}, "engine died"},
		{"another variant's failure", false, []Event{{Kind: EventVariantFail, Variant: "w", Detail: "engine died"}}, ""},
		{"merged: the failed shard resumed", true, []Event{fail("shard 1/2: disk is full"), resumed(`shard 1/2: previous status "failed"`)}, ""},
		{"merged: another shard resumed", true, []Event{fail("shard 1/2: disk is full"), resumed(`shard 2/2: previous status "interrupted"`)}, "shard 1/2: disk is full"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &RunData{Events: tt.events}
			if tt.merged {
				d.Manifest.Merge = &extractbench.Merge{}
			}
			if got := d.VariantFailure("v"); got != tt.want {
				t.Errorf("VariantFailure = %q, want %q", got, tt.want)
			}
		})
	}
}
