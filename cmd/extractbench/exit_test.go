package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"testing"

	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/pipeline/merge"
	"github.com/extractbench/extractbench/pipeline/protocol"
)

// TestExitCode: each error type says its own status (ExitCode), found
// anywhere in the chain, and a verdict outranks a usage error, which
// outranks an infrastructure one, as the switch it replaced did.
func TestExitCode(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, exitOK},
		{"help", fmt.Errorf("run: %w", flag.ErrHelp), exitOK},
		{"verdict", &verdictError{"x"}, exitVerdict},
		{"usage", &usageError{"x"}, exitUsage},
		{"config, wrapped", fmt.Errorf("run: %w", &pipeline.ConfigError{Err: errors.New("x")}), exitUsage},
		{"protocol", &protocol.Error{Problems: []string{"x"}}, exitUsage},
		{"validation", &pipeline.ValidationError{Problems: []string{"x"}}, exitUsage},
		{"corpus", &corpus.LoadError{}, exitUsage},
		{"interrupted", &interruptedError{dir: "d"}, exitInfra},
		{"incomplete merge", &incompleteError{sum: &merge.Report{}}, exitInfra},
		{"other", errors.New("disk full"), exitInternal},
		{"verdict over usage", errors.Join(&usageError{"x"}, &verdictError{"y"}), exitVerdict},
		{"usage over interrupted", fmt.Errorf("%w: %w", &interruptedError{dir: "d"}, &usageError{"x"}), exitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := exitCode(io.Discard, tt.err); got != tt.want {
				t.Errorf("exitCode(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
}
