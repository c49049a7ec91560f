// Command actiongraph summarises the file `go build -debug-actiongraph=FILE`
// writes: the CPU time (user + system, so a busy machine does not inflate
// it) of every compile, cgo and link step, the top packages and the total
// per module. scripts/cold-build.sh runs it after a cold build.
//
// Usage: go run ./scripts/actiongraph [-top N] FILE
package main

import (
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// action is the part of an action-graph entry the summary reads.
type action struct {
	Mode    string
	Package string
	CmdUser int64 // ns
	CmdSys  int64 // ns
}

func main() {
	top := flag.Int("top", 15, "how many packages to list")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: actiongraph [-top N] FILE")
		os.Exit(2)
	}
	b, err := os.ReadFile(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var actions []action
	if err := json.Unmarshal(b, &actions); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", flag.Arg(0), err)
		os.Exit(1)
	}
	byPkg, byModule := map[string]time.Duration{}, map[string]time.Duration{}
	var total time.Duration
	for _, a := range actions {
		d := time.Duration(a.CmdUser + a.CmdSys)
		if d == 0 {
			continue
		}
		step := a.Mode
		if strings.HasPrefix(step, "cgo compile") {
			step = "cgo compile (C)"
		}
		total += d
		byPkg[step+" "+a.Package] += d
		byModule[module(a.Package)] += d
	}
	fmt.Printf("CPU time of all steps: %.0f s\n", total.Seconds())
	fmt.Printf("top %d steps:\n", *top)
	for _, kv := range sorted(byPkg)[:min(*top, len(byPkg))] {
		fmt.Printf("  %6.1f s  %4.1f%%  %s\n", kv.d.Seconds(), 100*kv.d.Seconds()/total.Seconds(), kv.k)
	}
	fmt.Println("per module:")
	for _, kv := range sorted(byModule)[:min(*top, len(byModule))] {
		fmt.Printf("  %6.1f s  %4.1f%%  %s\n", kv.d.Seconds(), 100*kv.d.Seconds()/total.Seconds(), kv.k)
	}
}

// module is the module of an import path: "std" for the standard library,
// its module's path otherwise (as far as the path tells it), Arrow's
// compute split out as it is the largest part of Arrow to compile.
func module(pkg string) string {
	parts := strings.Split(pkg, "/")
	switch {
	case pkg == "":
		return "(link)"
	case !strings.Contains(parts[0], "."):
		return "std"
	case strings.HasPrefix(pkg, "github.com/apache/arrow-go/v18/arrow/compute"):
		return "github.com/apache/arrow-go/v18/arrow/compute"
	}
	n := 2 // google.golang.org/grpc, gopkg.in/yaml.v3
	if parts[0] == "github.com" || parts[0] == "golang.org" {
		n = 3
	}
	return strings.Join(parts[:min(n, len(parts))], "/")
}

type entry struct {
	k string
	d time.Duration
}

func sorted(m map[string]time.Duration) []entry {
	var out []entry
	for k, d := range m {
		out = append(out, entry{k, d})
	}
	slices.SortFunc(out, func(a, b entry) int { return cmp.Or(cmp.Compare(b.d, a.d), strings.Compare(a.k, b.k)) })
	return out
}
