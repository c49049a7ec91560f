package pipeline

import (
	"errors"
	"slices"
	"testing"

	"github.com/extractbench/extractbench/pipeline/family"
)

// TestReplicaIdentity_Changes: a part both reads know and that differs is a
// change; a part either does not know (a failed read, an Ollama with no
// model loaded, a key one build does not write) is none.
func TestReplicaIdentity_Changes(t *testing.T) {
	pinned := replicaIdentity{
		id:      family.Identity{Version: "b4567", Model: "/m/q4.gguf", Extra: map[string]string{"n_ctx": "4096", "total_slots": "4"}},
		idKnown: true,
		models:  []string{"m"},
	}
	failed := errors.New("GET /props: HTTP 500")
	for _, tt := range []struct {
		name string
		was  replicaIdentity
		now  identityRead
		want []string
	}{
		{"the same", pinned, identityRead{id: pinned.id, models: []string{"m"}}, nil},
		{"upgraded", pinned, identityRead{id: family.Identity{Version: "b4600", Model: "/m/q4.gguf", Extra: pinned.id.Extra}, models: []string{"m"}},
			[]string{"version b4567 → b4600"}},
		{"another file and context", pinned, identityRead{id: family.Identity{Version: "b4567", Model: "/m/q8.gguf", Extra: map[string]string{"n_ctx": "8192", "total_slots": "4"}}, models: []string{"m"}},
			[]string{"model /m/q4.gguf → /m/q8.gguf", "n_ctx 4096 → 8192"}},
		{"another served model", pinned, identityRead{id: pinned.id, models: []string{"m2"}}, []string{`served models ["m"] → ["m2"]`}},
		{"identity unread", pinned, identityRead{idErr: failed, models: []string{"m"}}, nil},
		{"models unread", pinned, identityRead{id: pinned.id, modelsErr: failed}, nil},
		{"model unloaded", pinned, identityRead{id: family.Identity{Version: "b4567"}, models: []string{"m"}}, nil},
		{"nothing pinned", replicaIdentity{}, identityRead{id: family.Identity{Version: "b4600"}, models: []string{"m2"}}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.was.changes(tt.now); !slices.Equal(got, tt.want) {
				t.Errorf("changes = %q, want %q", got, tt.want)
			}
		})
	}
}
