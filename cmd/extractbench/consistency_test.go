package main

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/engines/builtin/starter"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/results/compare"
)

// checkThroughputEverywhere: the accepted documents per hour of each
// variant's recommended level read the same on stdout ("accepted/h"), in
// report.md (the offline table), in plan ("accepted/hour" in passes) and in
// select ("in passes … accepted/h"): one figure, eval's level rule over the
// passes' docs_per_hour (eval/throughput.go); plan's sustained figure is
// labelled "sustained" and never printed as the one in passes.
func checkThroughputEverywhere(t *testing.T, dir string, sum *pipeline.RunReport, stdout, md string) {
	t.Helper()
	code, planText, stderr := runCLI(t, "plan", dir)
	if code != exitOK {
		t.Fatalf("plan: exit %d: %s", code, stderr)
	}
	code, selectText, stderr := runCLI(t, "select", dir)
	if code != exitOK && code != exitVerdict {
		t.Fatalf("select: exit %d: %s", code, stderr)
	}
	stdoutRows := map[string]string{}
	for _, row := range textRows(stdout, "variant") {
		stdoutRows[row["variant"]+"@"+row["level"]] = row["accepted/h"]
	}
	reportRows := map[string]string{}
	for _, tb := range mdTables(md) {
		if !strings.HasPrefix(tb.title, "Offline objective") || len(tb.rows) < 2 {
			continue
		}
		col := -1
		for i, h := range tb.rows[0] {
			if h == "accepted documents/hour" {
				col = i
			}
		}
		for _, r := range tb.rows[1:] {
			if col >= 0 && col < len(r) {
				reportRows[tb.variant+"@"+r[0]] = strings.SplitN(r[col], " ", 2)[0]
			}
		}
	}
	checked := 0
	for _, o := range sum.Variants {
		for _, s := range o.Series {
			n := s.Recommendation.Recommended
			l := s.Level(n)
			if l == nil || l.DocsPerHour.N == 0 {
				continue
			}
			checked++
			k := key(o.Variant, n)
			want := l.DocsPerHour.Rate() // every page prints it at the digits its spread supports
			if got := stdoutRows[k]; got != want {
				t.Errorf("stdout, %s: accepted/h %q, the level's figure is %s", k, got, want)
			}
			if got := reportRows[k]; got != want {
				t.Errorf("report.md, %s: accepted documents/hour %q, the level's figure is %s", k, got, want)
			}
			para := planParagraph(planText, o.Variant)
			if !strings.Contains(para, "Measured in passes") || !strings.Contains(para, ", "+want+" accepted/hour,") {
				t.Errorf("plan, %s: does not quote %s accepted/hour in passes:\n%s", k, want, para)
			}
			if !strings.Contains(para, " accepted/hour sustained") {
				t.Errorf("plan, %s: the sustained figure is not labelled sustained:\n%s", k, para)
			}
			found := false
			for _, line := range strings.Split(selectText, "\n") {
				if strings.Contains(line, "| "+o.Variant+": ") && strings.Contains(line, "in passes "+want+" accepted/h") {
					found = true
				}
			}
			if !found {
				t.Errorf("select, %s: no row quotes in passes %s accepted/h:\n%s", k, want, selectText)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no variant has a recommended level to compare")
	}
}

// planParagraph is plan's text for one variant: from the line that starts
// with its name to the next blank line.
func planParagraph(text, variant string) string {
	var out []string
	in := false
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, variant+" at "):
			in = true
		case in && strings.TrimSpace(line) == "":
			return strings.Join(out, "\n")
		}
		if in {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// figures are the three things every page must agree on for one level.
type figures struct{ p95, share, verdict string }

// TestOneTruthPerFigure runs the default protocol (the README's first
// command) once and checks that, for every level of every variant, the p95
// E2E, the accepted share and the verdict read the same on stdout, in -json,
// in report.html, in report.md and in compare's text and -json. Each page
// formats them its own way around the same figure (eval's aggregator and
// formatter), so a page that aggregated or judged on its own would differ.
func TestOneTruthPerFigure(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole default protocol (about a minute)")
	}
	dir := filepath.Join(t.TempDir(), "out")
	sum, err := pipeline.Run(context.Background(), pipeline.Options{OutDir: dir, Quiet: true, Starters: starter.Starters()})
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	printSummary(&stdout, sum)
	js, err := json.Marshal(sum)
	if err != nil {
		t.Fatal(err)
	}
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
	_, cmpText, _ := runCLI(t, "compare", dir+":bf16", dir+":int4")
	_, cmpJSON, _ := runCLI(t, "compare", "-json", dir+":bf16", dir+":int4")

	want := fromJSON(t, js)
	if len(want) != 14 {
		t.Fatalf("-json holds %d levels, want 14 (2 variants × 7 levels)", len(want))
	}
	pages := map[string]map[string]figures{
		"stdout":       fromStdout(t, stdout.String()),
		"report.md":    fromTables(t, mdTables(string(md))),
		"report.html":  fromTables(t, htmlTables(string(page))),
		"compare":      fromCompareText(t, cmpText),
		"compare JSON": fromCompareJSON(t, cmpJSON),
	}
	for name, got := range pages {
		for key, w := range want {
			g, ok := got[key]
			if !ok {
				t.Errorf("%s: level %s missing", name, key)
				continue
			}
			if g.p95 != "" && g.p95 != w.p95 || g.share != w.share || g.verdict != w.verdict {
				t.Errorf("%s, %s: p95 %q share %q verdict %q; -json says %q %q %q", name, key, g.p95, g.share, g.verdict, w.p95, w.share, w.verdict)
			}
		}
	}
	checkThroughputEverywhere(t, dir, sum, stdout.String(), string(md))
	// The verdict on stdout quotes the same figure as the table.
	for _, o := range sum.Variants {
		for _, s := range o.Series {
			if b := s.Recommendation.FirstBroken; b > 0 && strings.Contains(s.Level(b).Verdict.Reason, "p95 E2E") {
				l := s.Level(b)
				if p := l.E2EP95NS.Duration(); !strings.Contains(stdout.String(), "p95 E2E "+p) {
					t.Errorf("%s: stdout's verdict does not quote the table's p95 %s at level %d", o.Variant, p, b)
				}
			}
		}
	}
}

func key(variant string, level int) string { return variant + "@" + itoa(level) }

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func fromJSON(t *testing.T, js []byte) map[string]figures {
	var sum struct {
		Variants []struct {
			Series []eval.Series `json:"series"`
		} `json:"variants"`
	}
	if err := json.Unmarshal(js, &sum); err != nil {
		t.Fatal(err)
	}
	out := map[string]figures{}
	for _, v := range sum.Variants {
		for _, s := range v.Series {
			for _, l := range s.Levels {
				out[key(s.Variant, l.Level)] = figures{l.E2EP95NS.Duration(), eval.FormatShare(l.Share()), l.Verdict.Word()}
			}
		}
	}
	return out
}

var wide = regexp.MustCompile(`\s{2,}`)

// textRows reads a text table whose columns are separated by two or more
// spaces, from the header line whose first cell is first: one map per row.
func textRows(text, first string) []map[string]string {
	var rows []map[string]string
	var head []string
	for _, line := range strings.Split(text, "\n") {
		cells := wide.Split(strings.TrimSpace(line), -1)
		if len(cells) > 0 && cells[0] == first {
			head = cells
			continue
		}
		if head == nil || len(cells) != len(head) {
			continue
		}
		row := map[string]string{}
		for i, h := range head {
			row[h] = cells[i]
		}
		rows = append(rows, row)
	}
	return rows
}

func fromStdout(t *testing.T, text string) map[string]figures {
	out := map[string]figures{}
	for _, row := range textRows(text, "variant") {
		out[row["variant"]+"@"+row["level"]] = figures{row["E2E p95"], row["accepted"], row["verdict"]}
	}
	if len(out) == 0 {
		t.Fatalf("no level rows on stdout:\n%s", text)
	}
	return out
}

// table is one table of a report page: the variant section it sits in, its
// heading and its rows (the first is the header).
type pageTable struct {
	variant, title string
	rows           [][]string
}

// fromTables reads each level's p95 and verdict from the interactive table
// and its share from the quality table of each variant's section.
func fromTables(t *testing.T, tables []pageTable) map[string]figures {
	out := map[string]figures{}
	for _, tb := range tables {
		if len(tb.rows) < 2 {
			continue
		}
		col := map[string]int{}
		for i, h := range tb.rows[0] {
			col[h] = i
		}
		for _, r := range tb.rows[1:] {
			k := tb.variant + "@" + r[0]
			f := out[k]
			switch {
			case strings.HasPrefix(tb.title, "Interactive objective"):
				f.p95 = strings.SplitN(r[col["E2E p95"]], " ", 2)[0]
				f.verdict = strings.FieldsFunc(r[col["verdict"]], func(c rune) bool { return c == ':' || c == ',' || c == ' ' })[0]
			case strings.HasPrefix(tb.title, "Accepted share and failures"):
				f.share = r[col["share"]]
			default:
				continue
			}
			out[k] = f
		}
	}
	if len(out) == 0 {
		t.Fatal("no level tables found in the report")
	}
	return out
}

func mdTables(md string) []pageTable {
	var out []pageTable
	variant, title := "", ""
	for _, line := range strings.Split(md, "\n") {
		switch {
		case strings.HasPrefix(line, "## ") && strings.Contains(line, ": "):
			variant = strings.SplitN(strings.TrimPrefix(line, "## "), ":", 2)[0]
		case strings.HasPrefix(line, "### "):
			title = strings.TrimPrefix(line, "### ")
			out = append(out, pageTable{variant: variant, title: title})
		case strings.HasPrefix(line, "| ") && len(out) > 0 && !strings.HasPrefix(line, "| ---"):
			cells := strings.Split(strings.Trim(line, "| "), " | ")
			for i, c := range cells {
				cells[i] = html.UnescapeString(strings.ReplaceAll(c, `\`, ""))
			}
			out[len(out)-1].rows = append(out[len(out)-1].rows, cells)
		}
	}
	return out
}

var (
	htmlSection = regexp.MustCompile(`(?s)<details class="part series"[^>]*>\s*<summary>([^:<]+):.*?</details>`)
	htmlTable   = regexp.MustCompile(`(?s)<h3 id="[^"]*">([^<]*)</h3>.*?<table class="data[^"]*"[^>]*>(.*?)</table>`)
	htmlRow     = regexp.MustCompile(`(?s)<tr>(.*?)</tr>`)
	htmlCell    = regexp.MustCompile(`(?s)<t[hd][^>]*>(.*?)</t[hd]>`)
	htmlTag     = regexp.MustCompile(`<[^>]+>`)
)

func htmlTables(page string) []pageTable {
	var out []pageTable
	for _, sec := range htmlSection.FindAllStringSubmatch(page, -1) {
		for _, tb := range htmlTable.FindAllStringSubmatch(sec[0], -1) {
			pt := pageTable{variant: sec[1], title: html.UnescapeString(tb[1])}
			for _, row := range htmlRow.FindAllStringSubmatch(tb[2], -1) {
				var cells []string
				for _, c := range htmlCell.FindAllStringSubmatch(row[1], -1) {
					cells = append(cells, html.UnescapeString(htmlTag.ReplaceAllString(c[1], "")))
				}
				pt.rows = append(pt.rows, cells)
			}
			out = append(out, pt)
		}
	}
	return out
}

// fromCompareText reads compare's side-by-side table: "98.0% / 95.3%*"
// (a * marks a level that is not usable) and "E2E p95" as "A / B".
func fromCompareText(t *testing.T, text string) map[string]figures {
	out := map[string]figures{}
	for _, row := range textRows(text, "level") {
		shares := strings.Split(row["accepted A / B"], " / ")
		p95s := strings.Split(row["E2E p95"], " / ")
		if len(shares) != 2 || len(p95s) != 2 {
			continue
		}
		for i, v := range []string{"bf16", "int4"} {
			verdict := eval.VerdictUsable
			if strings.HasSuffix(shares[i], "*") {
				verdict = eval.VerdictNotUsable
			}
			out[v+"@"+row["level"]] = figures{strings.TrimSuffix(p95s[i], "†"), strings.TrimSuffix(shares[i], "*"), verdict}
		}
	}
	if len(out) == 0 {
		t.Fatalf("no level rows in compare's text:\n%s", text)
	}
	return out
}

func fromCompareJSON(t *testing.T, js string) map[string]figures {
	var r compare.Result
	if err := json.Unmarshal([]byte(js), &r); err != nil {
		t.Fatalf("compare -json: %v\n%s", err, js)
	}
	out := map[string]figures{}
	for _, row := range r.Levels {
		for v, l := range map[string]eval.Level{"bf16": row.A, "int4": row.B} {
			out[key(v, row.Level)] = figures{l.E2EP95NS.Duration(), eval.FormatShare(l.Share()), l.Verdict.Word()}
		}
	}
	return out
}
