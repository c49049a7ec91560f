package results

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestRunsIn: what a writer finds in its -out directory before taking it
// over: nothing, the runs it holds, or a results.db it must not touch.
func TestRunsIn(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name        string
		fill        func(t *testing.T, dir string)
		wantRuns    []string
		wantRefused bool
	}{
		{"no results.db yet", func(*testing.T, string) {}, nil, false},
		{"two runs", func(t *testing.T, dir string) {
			s, err := Open(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for _, id := range []string{"first", "second"} {
				if err := s.CreateRun(ctx, Run{RunID: id, Fingerprint: "fp", Status: RunComplete, Manifest: []byte(`{}`)}); err != nil {
					t.Fatal(err)
				}
			}
		}, []string{"first", "second"}, false},
		{"not a database", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, DBName), []byte("not sqlite, not at all, no header here"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.fill(t, dir)
			runs, err := RunsIn(ctx, dir)
			var refused *RefusedError
			if got := errors.As(err, &refused); got != tc.wantRefused {
				t.Fatalf("RunsIn: err = %v, refused %v, want refused %v", err, got, tc.wantRefused)
			}
			if !tc.wantRefused && err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, r := range runs {
				ids = append(ids, r.RunID)
			}
			if !slices.Equal(ids, tc.wantRuns) {
				t.Errorf("RunsIn = %v, want %v", ids, tc.wantRuns)
			}
		})
	}
}
