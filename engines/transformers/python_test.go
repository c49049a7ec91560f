// Package transformers_test runs the Python tests of the transformers engine
// fixture (server.py, tokenizer.py, ceiling.py, ratio.py) from `go test ./...`,
// so the README's test command and CI cover them too. The tests that need
// aiohttp or torch skip themselves where those are missing.
package transformers_test

import (
	"os/exec"
	"strings"
	"testing"
)

func TestPythonFixture(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found; the fixture's Python tests did not run")
	}
	cmd := exec.Command(py, "-m", "unittest", "discover", "-s", ".", "-p", "test_*.py")
	cmd.Env = append(cmd.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3 -m unittest: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "OK") {
		t.Fatalf("unittest did not report OK:\n%s", out)
	}
	t.Logf("%s", strings.TrimSpace(string(out)))
}
