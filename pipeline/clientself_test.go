package pipeline

import (
	"testing"
	"time"

	"github.com/extractbench/extractbench"
)

// TestClientSelf_DelayBoundScalesWithSlots: a p99 client delay of 61 ms is
// client-bound in a rate sweep (an absolute schedule) and beside requests of
// 200 ms, but not beside long documents whose median E2E is 106 s, where a
// request sent 61 ms late held its slot for 0.06% less of its time.
func TestClientSelf_DelayBoundScalesWithSlots(t *testing.T) {
	judge := func(mode extractbench.Mode, e2e time.Duration) bool {
		c := &clientSelf{wall0: time.Now()}
		for i := range 100 {
			c.sent(int64(1e9+i), int64(1e9+i)-int64(61*time.Millisecond)*int64(i)/99)
		}
		c.stop()
		p := &extractbench.Pass{Mode: mode, E2EP50NS: ptr(e2e.Nanoseconds())}
		c.Judge(p)
		return *p.ClientBound
	}
	for _, tc := range []struct {
		mode extractbench.Mode
		e2e  time.Duration
		want bool
	}{
		{extractbench.ModeContext, 106 * time.Second, false},
		{extractbench.ModeConcurrency, 106 * time.Second, false},
		{extractbench.ModeConcurrency, 200 * time.Millisecond, true},
		{extractbench.ModeRate, 106 * time.Second, true},
	} {
		if got := judge(tc.mode, tc.e2e); got != tc.want {
			t.Errorf("%s, median E2E %s, client delay p99 ~61ms: client_bound %v, want %v", tc.mode, tc.e2e, got, tc.want)
		}
	}
}
