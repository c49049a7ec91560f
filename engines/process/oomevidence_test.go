//go:build linux

package process

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestOOMWitness_ReadsWithoutBlocking: reading the machine's OOM counts at
// an engine's start returns at once whatever the machine lets it read (the
// kernel log is read to its end without waiting for a new line).
func TestOOMWitness_ReadsWithoutBlocking(t *testing.T) {
	done := make(chan oomWitness, 1)
	go func() { done <- newOOMWitness() }()
	select {
	case w := <-done:
		found, unread := w.evidence()
		if found != "" {
			t.Logf("this machine logged an OOM kill just now: %s", found)
		}
		t.Logf("cgroup %q, kmsg seq %d, unread %v", w.cgroupFile, w.kmsgSeq, unread)
	case <-time.After(5 * time.Second):
		t.Fatal("newOOMWitness blocked for 5 s")
	}
}

// TestOOMWitness_CgroupCount: an oom_kill count that grew since the start
// is memory evidence; one that did not is none.
func TestOOMWitness_CgroupCount(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.events")
	write := func(n int) {
		if err := os.WriteFile(path, []byte(fmt.Sprintf("low 0\nhigh 0\nmax 3\noom 1\noom_kill %d\noom_group_kill 0\n", n)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(2)
	n, err := cgroupOOMKills(path)
	if err != nil || n != 2 {
		t.Fatalf("cgroupOOMKills = %d, %v; want 2", n, err)
	}
	w := oomWitness{cgroupFile: path, cgroupKills: n, kmsgSeq: -1}
	if found, _ := w.evidence(); found != "" {
		t.Errorf("evidence with an unchanged count: %q", found)
	}
	write(3)
	if found, _ := w.evidence(); !strings.Contains(found, "1 oom_kill") {
		t.Errorf("evidence after an OOM kill = %q, want it counted", found)
	}
}
