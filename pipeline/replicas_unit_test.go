package pipeline

import (
	"slices"
	"testing"

	"github.com/extractbench/extractbench"
)

func TestPickReplica(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name     string
		inFlight []int
		usable   []bool
		start    int
		want     int
	}{
		{"fewest in flight", []int{3, 1, 2}, []bool{yes, yes, yes}, 0, 1},
		{"tie: the first from start", []int{1, 1, 1}, []bool{yes, yes, yes}, 1, 1},
		{"tie: wraps around", []int{0, 2, 0}, []bool{yes, yes, yes}, 2, 2},
		{"tie: wraps past the end", []int{0, 2, 1}, []bool{yes, yes, yes}, 1, 0},
		{"an unusable replica is never picked, however idle", []int{0, 5, 4}, []bool{no, yes, yes}, 0, 2},
		{"none usable", []int{0, 0}, []bool{no, no}, 0, -1},
		{"one replica", []int{7}, []bool{yes}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := pickReplica(tt.inFlight, tt.usable, tt.start); got != tt.want {
				t.Errorf("pickReplica(%v, %v, %d) = %d, want %d", tt.inFlight, tt.usable, tt.start, got, tt.want)
			}
		})
	}
}

// TestReplicaSet_Acquire: equally loaded replicas take turns; the
// least-loaded one is picked; a dead one gets nothing; a suspect one only
// when every live one is.
func TestReplicaSet_Acquire(t *testing.T) {
	s := newReplicaSet([]*replica{{name: "a"}, {name: "b"}, {name: "c"}})
	var got []string
	for range 6 { // one at a time: every replica idle at each pick
		r := s.acquire(1)
		got = append(got, r.name)
		s.release(r, 1)
	}
	if want := []string{"a", "b", "c", "a", "b", "c"}; !slices.Equal(got, want) {
		t.Errorf("one at a time: %v, want round robin %v", got, want)
	}
	a, b, c := s.acquire(1), s.acquire(1), s.acquire(1) // three in flight: one each
	if a.name != "a" || b.name != "b" || c.name != "c" {
		t.Fatalf("three requests in flight went to %s, %s, %s; want one on each replica", a.name, b.name, c.name)
	}
	s.release(b, 1)
	if r := s.acquire(2); r != b {
		t.Errorf("b finished and is the least loaded; the next went to %s", r.name)
	}
	if r := s.acquire(1); r != c { // a 1, b 2, c 1: the tie from after b
		t.Errorf("tie between a and c after b: got %s, want c", r.name)
	}

	s = newReplicaSet([]*replica{{name: "a"}, {name: "b"}})
	s.all[0].dead = true
	for range 3 {
		if r := s.acquire(1); r.name != "b" {
			t.Errorf("a dead replica got a request")
		}
	}
	s.all[1].suspect = true
	if r := s.acquire(1); r == nil || r.name != "b" {
		t.Errorf("the only live replica, under suspicion, is still used: got %v", r)
	}
	s.all[1].dead = true
	if r := s.acquire(1); r != nil {
		t.Errorf("every replica dead: got %s, want nil", r.name)
	}
	if !s.allDead() {
		t.Error("allDead() = false with every replica dead")
	}
}

// TestEngine_ReplicaNames: the names rows record for each kind of variant.
func TestEngine_ReplicaNames(t *testing.T) {
	tests := []struct {
		e    extractbench.Engine
		want []string
	}{
		{extractbench.Engine{URL: "builtin"}, nil},
		{extractbench.Engine{URL: "builtin", Replicas: 1}, nil},
		{extractbench.Engine{URL: "builtin", Replicas: 3}, []string{"builtin/1", "builtin/2", "builtin/3"}},
		{extractbench.Engine{URL: "http://a:1"}, nil},
		{extractbench.Engine{URLs: []string{"http://u:secret@a:1", "http://b:1"}}, []string{"http://a:1", "http://b:1"}},
	}
	for _, tt := range tests {
		if got := replicaNames(tt.e); !slices.Equal(got, tt.want) {
			t.Errorf("%+v: ReplicaNames() = %v, want %v", tt.e, got, tt.want)
		}
	}
}
