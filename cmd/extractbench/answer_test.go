package main

import (
	"bytes"
	"context"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/ci"
	"github.com/extractbench/extractbench/results/plan/plantest"
)

// sweepFixture writes a run of one variant, bf16, sweeping mode: its
// baseline (1, or a rate sweep's sync) and two levels above it, 40
// documents each, every one accepted. broken lists the levels whose p95
// E2E (3s) misses the objective (1s); the others' is 100ms.
func sweepFixture(t *testing.T, dir string, mode extractbench.Mode, broken ...int) {
	t.Helper()
	const docs = 40
	levels := map[extractbench.Mode][]int{extractbench.ModeRate: {extractbench.SyncLevel, 10, 20}}[mode]
	if levels == nil {
		levels = []int{1, 2, 4}
	}
	m := plantest.Manifest(plantest.DefaultCorpusSHA, "m", "NVIDIA L4", 24<<30, 0.9, 1000)
	m["sweep"] = map[string]any{"mode": string(mode), "levels": levels[1:], "repetitions": 1}
	m["variants"] = []map[string]any{{"name": "bf16"}}
	run := plantest.Run{RunID: "answer-" + string(mode), Manifest: m}
	for i, l := range levels {
		p95 := int64(100)
		for _, b := range broken {
			if b == l {
				p95 = 3000
			}
		}
		p := plantest.Pass("bf16", l, 1, docs, docs, 10, p95)
		p.Mode, p.Phase = mode, extractbench.PhaseSweep
		if i == 0 {
			p.Phase = extractbench.PhaseBaseline
		}
		recs := plantest.Records("bf16", l, 1, docs, func(int) bool { return true })
		for j := range recs {
			recs[j].Mode = mode
		}
		run.Passes, run.Records = append(run.Passes, p), append(run.Records, recs...)
	}
	plantest.Write(t, dir, run)
}

// rateFixture is a rate sweep of bf16 and int4, 300 documents at sync and
// at 10/s: int4 fails 8 documents bf16 accepts at sync; at 10/s bf16 fails
// those 8 and one more, int4 the 8.
func rateFixture() plantest.Run {
	m := plantest.Manifest(plantest.DefaultCorpusSHA, "m", "NVIDIA L4", 24<<30, 0.9, 0)
	m["sweep"] = map[string]any{"mode": "rate", "levels": []int{10}, "repetitions": 1}
	m["variants"] = []map[string]any{{"name": "bf16"}, {"name": "int4"}}
	run := plantest.Run{RunID: "golden-rate", Manifest: m}
	fails := func(n int) func(int) bool { return func(i int) bool { return i >= n } }
	for _, p := range []struct {
		variant      string
		level, fails int
	}{{"bf16", extractbench.SyncLevel, 0}, {"int4", extractbench.SyncLevel, 8}, {"bf16", 10, 9}, {"int4", 10, 8}} {
		pass := plantest.Pass(p.variant, p.level, 1, 300, 300-p.fails, 60, 100)
		pass.Mode, pass.Phase = extractbench.ModeRate, extractbench.PhaseSweep
		if p.level == extractbench.SyncLevel {
			pass.Phase = extractbench.PhaseBaseline
		}
		recs := plantest.Records(p.variant, p.level, 1, 300, fails(p.fails))
		for i := range recs {
			recs[i].Mode = extractbench.ModeRate
		}
		run.Passes, run.Records = append(run.Passes, pass), append(run.Records, recs...)
	}
	return run
}

// TestOneAnswerPerSweepMode: in every sweep mode, with a usable level
// and with none, every place that states the recommended (interactive)
// level states the same one, in the same words: stdout's verdict, the
// report's headline, first-screen card, verdict table, selection sheet
// and level tables (HTML and Markdown), select's sheet and the CI
// summary. The old code's rate report said "Interactive: rate sync" and
// "sync: usable, recommended" where stdout and the headline said no rate
// was usable, and its sheet named levels "0".
func TestOneAnswerPerSweepMode(t *testing.T) {
	type scenario struct {
		mode   extractbench.Mode
		broken []int
		want   string // eval.LevelName of the recommended level, "" for none
	}
	var cases []scenario
	for _, mode := range []extractbench.Mode{extractbench.ModeConcurrency, extractbench.ModeBatch} {
		cases = append(cases, scenario{mode, []int{4}, "1"}, scenario{mode, []int{1, 2, 4}, ""})
	}
	cases = append(cases, scenario{extractbench.ModeRate, []int{20}, "10/s"}, scenario{extractbench.ModeRate, []int{10, 20}, ""})
	for _, c := range cases {
		name := string(c.mode) + "/usable"
		if c.want == "" {
			name = string(c.mode) + "/none"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			sweepFixture(t, dir, c.mode, c.broken...)
			label := "none"
			if c.want != "" {
				label = string(c.mode) + " " + c.want
			}
			got := answersOf(t, dir)
			if len(got) < 10 {
				t.Fatalf("found %d statements of the recommended level, want every page's: %v", len(got), got)
			}
			for where, g := range got {
				w := label
				if strings.HasSuffix(where, "(level name)") {
					w = orNoneName(c.want)
				}
				if g != w {
					t.Errorf("%s says %q; the recommendation is %q", where, g, w)
				}
			}
		})
	}
}

func orNoneName(name string) string {
	if name == "" {
		return "none"
	}
	return name
}

// answersOf reads, from every page of the run in dir, what it states as
// the recommended level: a label ("rate 10/s", "none") keyed by where, or
// a level's name (keyed "… (level name)") where a page names the level in
// a column of levels.
func answersOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	rd, err := results.OpenReadOnly(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	data, err := rd.Load(context.Background())
	rd.Close()
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	printSummary(&stdout, &pipeline.RunReport{Variants: data.Outcomes()})
	if code, _, stderr := runCLI(t, "report", dir); code != exitOK {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	_, sel, _ := runCLI(t, "select", dir)
	run, err := ci.Load(context.Background(), dir, ci.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var summary bytes.Buffer
	if err := run.WriteMarkdown(&summary); err != nil {
		t.Fatal(err)
	}

	got := map[string]string{}
	set := func(where, v string) {
		if v != "" {
			got[where] = v
		}
	}
	set("stdout interactive", labelOf(after(stdout.String(), "     interactive: ")))
	set("select", labelOf(strings.TrimSuffix(between(sel, "interactive: ", ";"), ";")))
	set("CI summary", strings.TrimSuffix(cellOf(summary.String(), "recommended", "| bf16 |"), " usable"))
	htmlText := htmlLines(string(page))
	for name, text := range map[string]string{"report.md": string(md), "report.html": htmlText} {
		set(name+" headline", headlineLabel(firstLine(text, "variants passed", "Passed:", "No variant passed")))
		set(name+" verdict table", labelOf(cellOf(text, "interactive: recommended", "| bf16 (")))
		set(name+" sheet (level name)", strings.TrimSuffix(between(text, "Recommended "+sheetUnit(text), "\n"), ": no level was usable"))
		set(name+" level tables (level name)", recommendedRows(text))
	}
	set("report.md card", labelOf(after(string(md), "- **Interactive:** ")))
	if m := regexp.MustCompile(`data-check="interactive bf16"><strong>([^<]*)</strong>`).FindStringSubmatch(string(page)); m != nil {
		set("report.html card", html.UnescapeString(m[1]))
	}
	return got
}

// labelOf is the level a sentence starts with ("rate 10/s, one step below
// …", "concurrency 1: the only level …"), "none" for "none …" or "no
// usable …".
func labelOf(s string) string {
	s = strings.TrimSpace(s)
	switch {
	case s == "" || s == "–":
		return s
	case strings.HasPrefix(s, "none"), strings.HasPrefix(s, "no usable"):
		return "none"
	}
	if i := strings.IndexAny(s, ",:("); i > 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// headlineLabel is the level the headline recommends ("… at rate 10/s:
// …"), "none" when it says none has one or none passed.
func headlineLabel(s string) string {
	if s == "" {
		return ""
	}
	if m := regexp.MustCompile(` at ([^:]+): `).FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return "none"
}

// after is the rest of the first line that holds prefix.
func after(text, prefix string) string {
	for _, line := range strings.Split(text, "\n") {
		if i := strings.Index(line, prefix); i >= 0 {
			return line[i+len(prefix):]
		}
	}
	return ""
}

// between is the first line's text between from and to (to excluded).
func between(text, from, to string) string {
	rest := after(text, from)
	if to == "\n" {
		return strings.Trim(strings.TrimSpace(rest), "*|: ")
	}
	if i := strings.Index(rest, to); i >= 0 {
		return rest[:i]
	}
	return rest
}

func firstLine(text string, any ...string) string {
	for _, line := range strings.Split(text, "\n") {
		for _, a := range any {
			if strings.Contains(line, a) {
				return strings.Trim(line, "* ")
			}
		}
	}
	return ""
}

// sheetUnit is the unit the sheet's "Recommended …" row names.
func sheetUnit(text string) string {
	m := regexp.MustCompile(`Recommended (concurrency|batch size|rate)`).FindStringSubmatch(text)
	if m == nil {
		return "?"
	}
	return m[1]
}

// cellOf is the cell, in the first row that starts with row, of the column
// whose header contains head (Markdown-like "| a | b |" lines).
func cellOf(text, head, row string) string {
	col := -1
	for _, line := range strings.Split(text, "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if strings.Contains(line, head) && strings.HasPrefix(line, "|") {
			col = -1
			for i, c := range cells {
				if strings.Contains(c, head) {
					col = i
				}
			}
			continue
		}
		if col >= 0 && strings.HasPrefix(line, row) && col < len(cells) {
			return strings.TrimSpace(cells[col])
		}
	}
	return ""
}

// recommendedRows lists the first cell of every table row whose cells say
// "recommended" (the level tables' verdict column), "none" when none does.
func recommendedRows(text string) string {
	seen := map[string]bool{}
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "| ") || !strings.Contains(line, ", recommended") {
			continue
		}
		level := strings.TrimSpace(strings.Split(strings.Trim(line, "| "), " | ")[0])
		if !seen[level] {
			seen[level] = true
			out = append(out, level)
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, " and ")
}

var (
	htmlRowRe  = regexp.MustCompile(`(?s)<tr[^>]*>(.*?)</tr>`)
	htmlCellRe = regexp.MustCompile(`(?s)<t[hd][^>]*>(.*?)</t[hd]>`)
	htmlTagRe  = regexp.MustCompile(`(?s)<[^>]+>`)
	htmlEndRe  = regexp.MustCompile(`(?i)</(p|dd|li|h[1-6]|summary|div)>|<br>`)
	htmlDropRe = regexp.MustCompile(`(?s)<(style|script|svg)[^>]*>.*?</(style|script|svg)>`)
)

// htmlLines is a report page as lines: each table row "| a | b |", each
// paragraph a line, tags dropped.
func htmlLines(page string) string {
	page = htmlDropRe.ReplaceAllString(page, "")
	page = htmlRowRe.ReplaceAllStringFunc(page, func(row string) string {
		var cells []string
		for _, c := range htmlCellRe.FindAllStringSubmatch(row, -1) {
			cells = append(cells, strings.Join(strings.Fields(htmlTagRe.ReplaceAllString(c[1], "")), " "))
		}
		return "\n| " + strings.Join(cells, " | ") + " |\n"
	})
	page = htmlEndRe.ReplaceAllString(page, "\n")
	return html.UnescapeString(htmlTagRe.ReplaceAllString(page, ""))
}

var _ = eval.LevelName

// TestCI_rateSweepPairsAtSync: the JUnit and summary files of a rate
// sweep pair int4 with bf16 at sync (the old code skipped it: "compare
// does not pair" sync), and each level lists its own failed documents
// (the old reader's level 0 meant every level: sync listed 10/s's).
func TestCI_rateSweepPairsAtSync(t *testing.T) {
	dir := t.TempDir()
	plantest.Write(t, dir, rateFixture())
	run, err := ci.Load(context.Background(), dir, ci.Options{MaxDocs: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Variants) != 2 {
		t.Fatalf("%d variants, want 2", len(run.Variants))
	}
	p := run.Variants[1].Paired
	if p == nil || p.Result == nil {
		t.Fatalf("int4 not paired: %+v", p)
	}
	if got, want := p.Name(), "paired vs bf16 (rate sync, repetition 1)"; got != want || p.Verdict() != "NOT EQUIVALENT" {
		t.Errorf("paired %q %s, want %q NOT EQUIVALENT", got, p.Verdict(), want)
	}
	failed := map[int]int{}
	for _, l := range run.Variants[0].Levels {
		failed[l.Level.Level] = l.NFailed
	}
	if failed[extractbench.SyncLevel] != 0 || failed[10] != 9 {
		t.Errorf("bf16's failed documents per level = %v, want sync (0) 0 and 10/s 9", failed)
	}
}
