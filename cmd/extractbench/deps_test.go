package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The binary does not import what it never uses: a cold build compiles
// every package the binary imports, and these cost a cold build about 20
// CPU-seconds of ~380 (scripts/cold-build.sh) for code no command runs.
// Tests may still import them (pqarrow reads Parquet back in tests).
func TestBinaryDependencies(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on the PATH")
	}
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	banned := map[string]string{
		"github.com/apache/arrow-go/v18/parquet/pqarrow": "results writes Parquet with parquet/file's column writers",
		"github.com/apache/arrow-go/v18/arrow/flight":    "Arrow Flight: an RPC protocol; pqarrow imported it to serialise a schema",
		"google.golang.org/grpc":                         "gRPC, through Arrow Flight",
		"golang.org/x/net/http2":                         "HTTP/2, through gRPC",
	}
	for _, pkg := range strings.Fields(string(out)) {
		for prefix, why := range banned {
			if pkg == prefix || strings.HasPrefix(pkg, prefix+"/") {
				t.Errorf("cmd/extractbench imports %s (%s)", pkg, why)
				delete(banned, prefix)
			}
		}
	}
}
