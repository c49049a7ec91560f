// Package pipelinetest holds the helpers the tests of pipeline and its
// sub-packages (client, telemetry, dispatch, ...) share, so that each is
// written once: a context that bounds a test's I/O, and a file read that
// fails the test.
package pipelinetest

import (
	"context"
	"os"
	"testing"
	"time"
)

// Deadline bounds every test that does I/O: none may hang.
const Deadline = 10 * time.Second

// Context is a context that ends Deadline from now or when the test ends.
func Context(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Deadline)
	t.Cleanup(cancel)
	return ctx
}

// ReadFile returns the content of path, failing the test when it cannot be read.
func ReadFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
