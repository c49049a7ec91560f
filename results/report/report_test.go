package report

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/compare"
	"github.com/extractbench/extractbench/sizing"
)

var update = flag.Bool("update", false, "rewrite testdata/fixture.golden.md")

// mustWriteFixture writes a fixture and its report into a temporary
// directory and returns the directory.
func mustWriteFixture(tb testing.TB, f fixture) string {
	tb.Helper()
	dir := tb.TempDir()
	f.write(tb, dir)
	if err := Write(context.Background(), dir); err != nil {
		tb.Fatalf("Write: %v", err)
	}
	return dir
}

func readFile(tb testing.TB, path string) string {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

func TestWrite_MarkdownGolden(t *testing.T) {
	dir := mustWriteFixture(t, defaultFixture)
	got := readFile(t, filepath.Join(dir, MarkdownFile))
	golden := filepath.Join("testdata", "fixture.golden.md")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if want := readFile(t, golden); got != want {
		t.Errorf("report.md differs from %s (run go test -update after checking the change):\n%s", golden, firstDiff(got, want))
	}
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return "line " + strconv.Itoa(i+1) + ":\n got: " + gl + "\nwant: " + wl
		}
	}
	return ""
}

func TestBuild_SelectionSheet(t *testing.T) {
	dir := t.TempDir()
	defaultFixture.write(t, dir)
	p, err := build(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Simulated {
		t.Error("simulated run not labelled as such")
	}
	if len(p.Series) != 1 {
		t.Fatalf("got %d series, want 1", len(p.Series))
	}
	sheet := map[string]string{}
	for _, kv := range p.Series[0].Sheet {
		sheet[kv.K] = kv.V
	}
	tests := []struct{ key, want string }{
		{"Recommended concurrency", "4"},
		{"First level that broke", "16: 18 memory failure(s)"}, // summed over the 3 repetitions
		{"GPU and memory", "NVIDIA L4 (simulated), 22.5 GiB per card (from builtin-profile)"},
		{"Context window", "8,192 tokens"},
		{"Model and revision", "meta-llama/Llama-3.1-8B-Instruct @ 0e9e39f"},
	}
	for _, tt := range tests {
		if got := sheet[tt.key]; !strings.HasPrefix(got, tt.want) {
			t.Errorf("sheet[%q] = %q, want prefix %q", tt.key, got, tt.want)
		}
	}
	if why := sheet["Margin and why"]; !strings.Contains(why, "one step below 8") || !strings.Contains(why, "memory") {
		t.Errorf("margin and why = %q: want the step back from 8 and the memory break", why)
	}
	// Every level shows, and each table has one row per level.
	for _, tb := range p.Series[0].Tables[:4] {
		if got, want := len(tb.Rows), len(defaultFixture.Levels); got != want {
			t.Errorf("table %s: got %d rows, want %d", tb.ID, got, want)
		}
	}
	if got, want := len(p.Data.Charts), 10; got != want {
		t.Errorf("got %d charts, want %d", got, want)
	}
}

// TestBuild_BareEngine: without telemetry or memory figures the three charts
// that would be empty are left out with a reason, and the tables say "–",
// never 0.
func TestBuild_BareEngine(t *testing.T) {
	f := defaultFixture
	f.Bare = true
	dir := t.TempDir()
	f.write(t, dir)
	p, err := build(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sp := p.Series[0]
	var ids []string
	for _, c := range sp.Charts {
		ids = append(ids, strings.TrimPrefix(c.ID, "s0-"))
	}
	if got, want := strings.Join(ids, " "), "ttft e2e throughput tokens acceptance failures fields"; got != want {
		t.Errorf("charts = %q, want %q", got, want)
	}
	if len(sp.Omitted) != 3 {
		t.Errorf("omitted = %q, want the timeline, the memory and the KV chart", sp.Omitted)
	}
	mem := sp.Tables[3]
	if got := mem.Rows[0][1:5]; strings.Join(got, " ") != "– – – –" {
		t.Errorf("memory row = %q, want – for every unmeasured peak", got)
	}
}

func TestBuild_Levels(t *testing.T) {
	dir := t.TempDir()
	defaultFixture.write(t, dir)
	d, err := load(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	s := buildSeries(d)[0]
	docs, reps := defaultFixture.Docs, defaultFixture.Reps
	long := docs / 10
	for _, l := range s.Levels {
		wantMemory := 0
		if l.Level >= defaultFixture.OOMAt {
			wantMemory = long * reps
		}
		wantFormat := 0
		if l.Level == defaultFixture.OOMAt {
			wantFormat = 1
		}
		got := [3]int64{l.Docs, l.Failures.Of(extractbench.Memory), l.Failures.Of(extractbench.Format)}
		want := [3]int64{int64(docs * reps), int64(wantMemory), int64(wantFormat)}
		if got != want {
			t.Errorf("level %d: docs, memory, format = %v, want %v", l.Level, got, want)
		}
		if n := s.PooledE2E[l.Level].N; n != docs*reps {
			t.Errorf("level %d: pooled E2E rests on %d requests, want %d", l.Level, n, docs*reps)
		}
		if l.PeakKVUsage == nil || l.DurationNS.N != reps || l.E2EP95NS.N != reps {
			t.Errorf("level %d: peak KV %v, corpus time and p95 over %d and %d repetitions, want set and %d", l.Level, l.PeakKVUsage, l.DurationNS.N, l.E2EP95NS.N, reps)
		}
	}
	// Latency grows with the level in the fixture, so the medians must too.
	for i := 1; i < len(s.Levels)-1; i++ {
		if s.Levels[i].TTFTP50NS.Median <= s.Levels[i-1].TTFTP50NS.Median {
			t.Errorf("TTFT median at level %d (%v) not above level %d (%v)", s.Levels[i].Level, s.Levels[i].TTFTP50NS, s.Levels[i-1].Level, s.Levels[i-1].TTFTP50NS)
		}
	}
	classes := byClass(s)
	if got, want := len(classes), 3*len(defaultFixture.Levels); got != want {
		t.Fatalf("got %d class rows, want %d", got, want)
	}
	if c := classes[len(classes)-1]; c.Class != "long" || c.Failures.Of(extractbench.Memory) != int64(long*reps) || c.Accepted != 0 {
		t.Errorf("top level long row = %+v: want every long document failing on memory", c)
	}
	fails := failed(s, nil)
	var ids []string
	for _, f := range fails {
		ids = append(ids, f.DocID)
	}
	// Long documents are every tenth (doc-0010, doc-0020, ...), plus doc-0005 and doc-0007.
	want := []string{"doc-0005", "doc-0007", "doc-0010", "doc-0020", "doc-0030", "doc-0040", "doc-0050", "doc-0060"}
	if strings.Join(ids, " ") != strings.Join(want, " ") {
		t.Errorf("failed documents = %v, want %v", ids, want)
	}
	if f := fails[1]; f.Failed != len(defaultFixture.Levels)*reps || f.Class != "quality" {
		t.Errorf("doc-0007 = %+v, want a quality failure in every pass", f)
	}
	slow := slowest(s, nil)
	if len(slow) != slowestDocs || slow[0].LengthClass != "long" || slow[0].Level != 4 {
		t.Errorf("slowest = %+v, want %d documents at level 4, a long one first", slow, slowestDocs)
	}
}

// TestWrite_EscapesScript puts <script> and an onerror handler in a
// document's text, its output, its failure reason and the engine version:
// none may reach report.html as markup, and the JSON data must not close its
// script element early.
func TestWrite_EscapesScript(t *testing.T) {
	f := defaultFixture
	f.Version = "0.1.0 " + payload
	dir := mustWriteFixture(t, f)
	html := readFile(t, filepath.Join(dir, HTMLFile))
	for _, bad := range []string{"<script>document.body", "<img src=x", "</script><script>document", "onerror=\""} {
		if strings.Contains(html, bad) {
			t.Errorf("report.html contains %q unescaped", bad)
		}
	}
	if got, want := strings.Count(strings.ToLower(html), "<script"), 3; got != want {
		t.Errorf("report.html has %d <script elements, want %d (uPlot, data, report.js)", got, want)
	}
	if !strings.Contains(html, "&lt;script&gt;document.body.setAttribute(&#39;data-pwned&#39;,&#39;1&#39;)&lt;/script&gt;") {
		t.Error("the hostile document's excerpt is not shown escaped")
	}
	// The data script ends at the first "</script" (HTML parsing rules), so
	// everything up to it must be the JSON and its terminator.
	i := strings.Index(html, "const REPORT = ")
	if i < 0 {
		t.Fatal("no embedded data")
	}
	data := html[i:]
	data = data[:strings.Index(strings.ToLower(data), "</script")]
	if strings.Contains(data, "<") {
		t.Errorf("embedded data holds a raw '<': %.200s", data[strings.Index(data, "<"):])
	}

	md := readFile(t, filepath.Join(dir, MarkdownFile))
	code := regexp.MustCompile("`[^`]*`")
	rawHTML := regexp.MustCompile(`(^|[^\\])(\\\\)*<[A-Za-z/!?]`) // an unescaped '<' that opens a tag, comment or autolink
	for n, line := range strings.Split(md, "\n") {
		if rest := code.ReplaceAllString(line, ""); rawHTML.MatchString(rest) {
			t.Errorf("report.md line %d has markup outside a code span: %.200s", n+1, rest)
		}
	}
	if !strings.Contains(md, "`Invoice with a hostile note <script>") {
		t.Error("report.md does not show the hostile document's excerpt as code")
	}
}

func TestWrite_Errors(t *testing.T) {
	ctx := context.Background()
	t.Run("no results.db", func(t *testing.T) {
		err := Write(ctx, t.TempDir())
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "results.db") {
			t.Errorf("got %v, want an error saying results.db does not exist", err)
		}
	})
	t.Run("no run", func(t *testing.T) {
		dir := t.TempDir()
		st, err := results.Open(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		st.Close()
		err = Write(ctx, dir)
		if !errors.Is(err, results.ErrNoRun) {
			t.Errorf("got %v, want results.ErrNoRun", err)
		}
		if _, err := os.Stat(filepath.Join(dir, HTMLFile)); !os.IsNotExist(err) {
			t.Errorf("report.html written despite the error (stat: %v)", err)
		}
	})
}

func TestCorpusTexts(t *testing.T) {
	dir := t.TempDir()
	defaultFixture.write(t, dir)
	c, err := corpus.Load(filepath.Join(dir, "corpus", "documents.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		info     extractbench.CorpusInfo
		wantDocs int
		wantNote string
	}{
		{"relative to the results directory", extractbench.CorpusInfo{Path: "corpus/documents.jsonl", SHA256: c.Manifest.SHA256}, defaultFixture.Docs, ""},
		{"absolute", extractbench.CorpusInfo{Path: filepath.Join(dir, "corpus"), SHA256: c.Manifest.SHA256}, defaultFixture.Docs, ""},
		{"another corpus", extractbench.CorpusInfo{Path: "corpus/documents.jsonl", SHA256: "0123456789abcdef"}, 0, "the run measured 0123456789ab"},
		{"missing", extractbench.CorpusInfo{Path: "nowhere.jsonl"}, 0, "corpus not found at " + filepath.Join(dir, "nowhere.jsonl")},
		{"unrecorded", extractbench.CorpusInfo{}, 0, "names no corpus path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			texts, note := corpusTexts(dir, tt.info)
			if len(texts) != tt.wantDocs || !strings.Contains(note, tt.wantNote) || (tt.wantNote == "") != (note == "") {
				t.Errorf("got %d texts and note %q, want %d and a note containing %q", len(texts), note, tt.wantDocs, tt.wantNote)
			}
		})
	}
}

func TestExcerpt(t *testing.T) {
	long := strings.Repeat("a", excerptRunes+5)
	tests := []struct{ in, want string }{
		{"", ""},
		{"  Total:\n\tR$ 10,00  ", "Total: R$ 10,00"},
		{"a\x00b\x1bc", "abc"},
		{long, strings.Repeat("a", excerptRunes) + "…"},
		{"bad \xff utf8", "bad \uFFFD utf8"},
	}
	for _, tt := range tests {
		if got := excerpt(tt.in); got != tt.want {
			t.Errorf("excerpt(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestMarkdownEscaping(t *testing.T) {
	tests := []struct{ name, got, want string }{
		{"text", mdText("a|b *c* [x](http://e) <b>\nnext"), `a\|b \*c\* \[x\](http://e) \<b> next`},
		{"comparison stays plain", mdText("accepted 87.8% < threshold 90.0%; p95 3s > 2.5s & more"), "accepted 87.8% < threshold 90.0%; p95 3s > 2.5s & more"},
		{"entity and autolink", mdText("&amp; &#60; <http://x> <!-- c --> </b>"), `\&amp; &\#60; \<http://x> \<!-- c --> \</b>`},
		{"block quote", mdText("  > quoted > not"), `  \> quoted > not`},
		{"code", mdCode("x `y` | <script>"), "`x 'y' \\| <script>`"},
		{"empty code", mdCode(""), ""},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}
	tb := mdTable(table{Head: []string{"doc", "excerpt"}, Code: []bool{false, true}, Rows: [][]string{{"d|1", "a|b"}}})
	if want := "| doc | excerpt |\n| --- | --- |\n| d\\|1 | `a\\|b` |\n"; tb != want {
		t.Errorf("mdTable = %q, want %q", tb, want)
	}
}

func TestFmtNS(t *testing.T) {
	tests := []struct {
		ns   float64
		want string
	}{
		{0, "0s"}, {2.5e6, "2.5ms"}, {412e6, "412ms"}, {3.1e9, "3.1s"}, {12.34e9, "12.3s"}, {300e9, "5m0s"}, {3 * 3.6e12, "3h0m0s"},
	}
	for _, tt := range tests {
		if got := fmtNS(tt.ns); got != tt.want {
			t.Errorf("fmtNS(%v) = %q, want %q", tt.ns, got, tt.want)
		}
	}
	if got := fmtNum(1234567.4); got != "1,230,000" { // three significant digits
		t.Errorf("fmtNum = %q", got)
	}
}

// FuzzMarkdownInert checks that any document text, once excerpted and put
// in a Markdown cell, stays one inert cell: one code span or escaped text, no
// line break, no raw HTML or entity, no unescaped pipe.
func FuzzMarkdownInert(f *testing.F) {
	for _, s := range []string{payload, scriptPayload, "a|b`c`\nd", "<img src=x>", "[link](http://x)", "\\|"} {
		f.Add(s)
	}
	unescapedPipe := regexp.MustCompile(`(^|[^\\])(\\\\)*\|`)
	rawHTML := regexp.MustCompile(`(^|[^\\])(\\\\)*<[A-Za-z/!?]`) // an unescaped '<' that opens a tag, comment or autolink
	entity := regexp.MustCompile(`(^|[^\\])(\\\\)*&[A-Za-z#]`)
	f.Fuzz(func(t *testing.T, s string) {
		code := mdCode(excerpt(s))
		if code != "" && (strings.Count(code, "`") != 2 || !strings.HasPrefix(code, "`") || !strings.HasSuffix(code, "`")) {
			t.Errorf("mdCode(excerpt(%q)) = %q: not a single code span", s, code)
		}
		text := mdText(s)
		if strings.ContainsAny(text, "\n\r") || strings.ContainsAny(code, "\n\r") || rawHTML.MatchString(text) || entity.MatchString(text) ||
			strings.HasPrefix(strings.TrimLeft(text, " "), ">") {
			t.Errorf("mdText(%q) = %q: holds a line break, raw HTML, an entity or a block quote", s, text)
		}
		if unescapedPipe.MatchString(text) {
			t.Errorf("mdText(%q) = %q: holds an unescaped pipe", s, text)
		}
	})
}

// TestBuild_FieldTables: precision, recall and F1 per field and level, and
// per length class at the level the sheet reads, from eval's field counts;
// a memory failure is a missed field that lowers recall, never a dropped
// document.
func TestBuild_FieldTables(t *testing.T) {
	dir := t.TempDir()
	defaultFixture.write(t, dir)
	p, err := build(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tables := map[string]table{}
	for _, tb := range p.Series[0].Tables {
		tables[strings.TrimPrefix(tb.ID, "s0-")] = tb
	}
	fields, byClass := tables["fields"], tables["fields-by-length"]
	if got, want := len(fields.Rows), 3*len(defaultFixture.Levels); got != want {
		t.Fatalf("field table has %d rows, want 3 per level: %d", got, want)
	}
	row := func(tb table, a, b string) []string {
		for _, r := range tb.Rows {
			if r[0] == a && r[1] == b {
				return r
			}
		}
		t.Fatalf("table %s has no row %s %s", tb.ID, a, b)
		return nil
	}
	// Level 16: the long documents ran out of memory; their fields were
	// expected and never scored.
	if got, want := strings.Join(row(fields, "16", "date"), " "), "16 date 180 100.0% 89.4% 94.4% 161 0 0 19"; got != want {
		t.Errorf("level 16 date = %q, want %q", got, want)
	}
	if got, want := strings.Join(row(fields, "1", "amount")[3:6], " "), "98.3% 98.3% 98.3%"; got != want {
		t.Errorf("level 1 amount precision, recall, F1 = %q, want %q (doc-0007's wrong amount)", got, want)
	}
	if !strings.HasSuffix(byClass.Title, "at concurrency 4") {
		t.Errorf("length-class table title %q, want it at the recommended concurrency 4", byClass.Title)
	}
	var classes []string
	for i, r := range byClass.Rows {
		if i%3 == 0 {
			classes = append(classes, r[0])
		}
	}
	if got, want := strings.Join(classes, " "), "short usual long"; got != want {
		t.Errorf("length classes in order %q, want %q", got, want)
	}
	if got, want := strings.Join(row(byClass, "short", "amount")[2:7], " "), "54 94.4% 94.4% 94.4% 94.4%"; got != want {
		t.Errorf("short amount = %q, want %q", got, want)
	}
}

// TestHeadline: the summary's first sentence names the passing variant with
// the most accepted documents/hour at its recommended level, with that
// level's figures; failed variants never win; none passing is said.
func TestHeadline(t *testing.T) {
	m := &extractbench.Manifest{Variants: []extractbench.VariantManifest{
		{Name: "bf16", Engine: extractbench.EngineInfo{Model: "m"}, GPU: extractbench.GPUInfoJSON{Name: "NVIDIA H100"}},
		{Name: "int4", Engine: extractbench.EngineInfo{Model: "m-int4"}, GPU: extractbench.GPUInfoJSON{Name: "NVIDIA L4"}},
		{Name: "fast-but-wrong", Engine: extractbench.EngineInfo{Model: "x"}},
	}}
	share := 0.98
	outcome := func(name, state string, rate, p95 float64) results.Outcome {
		return results.Outcome{Variant: name, Model: m.Variant(name).Engine.Model, State: state, BaselineShare: &share, PassesDone: 3,
			Series: []eval.Series{{Variant: name, Mode: "concurrency", Recommendation: eval.Recommendation{Recommended: 8},
				Levels: []eval.Level{{Level: 8, DocsPerHour: eval.Spread{N: 1, Median: rate, Min: rate, Max: rate},
					E2EP95NS: eval.Spread{N: 1, Median: p95, Min: p95, Max: p95}}}}}}
	}
	outs := []results.Outcome{outcome("bf16", results.OutcomePass, 4000, 9e8), outcome("int4", results.OutcomePass, 6000, 7e8),
		outcome("fast-but-wrong", results.OutcomeFail, 90000, 1e8)}
	got := headline(m, outs, nil)
	want := "2 of 3 variants passed; the fastest at its recommended level: int4 (m-int4 on NVIDIA L4) at concurrency 8: 6,000 accepted documents/hour, p95 E2E 700ms, baseline accepted 98.0%."
	if got != want {
		t.Errorf("headline =\n%q\nwant\n%q", got, want)
	}
	for i := range outs {
		outs[i].State = results.OutcomeFail
	}
	if got := headline(m, outs, nil); !strings.HasPrefix(got, "No variant passed") {
		t.Errorf("headline with none passing = %q", got)
	}
}

// TestBuild_RenterLines: the selection sheet carries the environment check,
// memory per phase and, with a price file, the cost per 1,000 accepted
// documents at the recommended level, labelled with the file (PLACEHOLDER
// when it says so).
func TestBuild_RenterLines(t *testing.T) {
	dir := t.TempDir()
	defaultFixture.write(t, dir)
	pricePath := filepath.Join(dir, "prices.yaml")
	if err := os.WriteFile(pricePath, []byte("currency: USD\nplaceholder: true\nper_card_hour:\n  L4: 2.50\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	prices, err := sizing.LoadPrices(pricePath)
	if err != nil {
		t.Fatal(err)
	}
	p, err := build(context.Background(), dir, Options{Prices: prices})
	if err != nil {
		t.Fatal(err)
	}
	sheet := map[string]string{}
	for _, kv := range p.Series[0].Sheet {
		sheet[kv.K] = kv.V
	}
	if got := sheet["Environment fit (card, driver, CUDA, engine build, precision)"]; !strings.HasPrefix(got, "simulated") {
		t.Errorf("environment line = %q, want the simulated card said so", got)
	}
	cost := sheet["Cost"]
	// 2.50 per card-hour over the recommended level's sustained accepted rate.
	if !strings.Contains(cost, "per 1,000 accepted documents at concurrency 4 (2.50 per card-hour; USD, PLACEHOLDER prices") {
		t.Errorf("cost line = %q", cost)
	}
	p, err = build(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range p.Series[0].Sheet {
		if kv.K == "Cost" && !strings.Contains(kv.V, "no price file") {
			t.Errorf("without prices: cost line = %q", kv.V)
		}
	}
}

// TestRunLines_TelemetryErrors: passes whose engine scrapes failed are
// named in the run's lines, per variant, with the last error, so that a
// missing engine figure is not read as an unmeasured one.
func TestRunLines_TelemetryErrors(t *testing.T) {
	d := &dataset{RunData: &results.RunData{Events: []results.Event{
		{Variant: "bf16", Kind: results.EventTelemetryErrors, Detail: "pass at level 2, repetition 1: 3 of 3 metrics scrapes failed (last: a)"},
		{Variant: "bf16", Kind: results.EventTelemetryErrors, Detail: "pass at level 8, repetition 1: 2 of 2 metrics scrapes failed (last: b)"},
		{Variant: "fp8", Kind: results.EventWarmup, ValueNS: 1e9},
	}}}
	var got []string
	for _, l := range runLines(d, &extractbench.Manifest{}) {
		if strings.HasPrefix(l.K, "Telemetry errors") {
			got = append(got, l.K+": "+l.V)
		}
	}
	want := "Telemetry errors (bf16): 2 passes with failed scrapes, engine figures partial or missing; last: pass at level 8, repetition 1: 2 of 2 metrics scrapes failed (last: b)"
	if len(got) != 1 || got[0] != want {
		t.Errorf("telemetry lines = %q, want [%q]", got, want)
	}
}

// TestBuild_PairedVerdict: with several variants, the headline, the
// verdict table and the first screen give each variant's paired verdict
// against the baseline variant, as compare computes it (Δ, interval,
// flips), and each card both objectives with why.
func TestBuild_PairedVerdict(t *testing.T) {
	f := defaultFixture
	f.Variants = []string{"bf16", "int8"}
	dir := t.TempDir()
	f.write(t, dir)
	p, err := build(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := compare.Run(context.Background(), compare.Options{A: compare.Side{Dir: dir, Variant: "bf16"}, B: compare.Side{Dir: dir, Variant: "int8"}})
	if err != nil {
		t.Fatal(err)
	}
	word := "NOT EQUIVALENT"
	switch {
	case r.Equivalent:
		word = "EQUIVALENT"
	case r.Inconclusive: // 60 documents cannot show ±2 points: compare's word too
		word = "INCONCLUSIVE"
	}
	eq := r.Equivalence
	want := fmt.Sprintf("Paired against bf16 on the same documents: int8 %s (Δ %+.1f points, [%+.1f, %+.1f], %d flips).", word, eq.Delta*100, eq.Lo*100, eq.Hi*100, eq.B+eq.C)
	if !strings.HasPrefix(p.Headline, want) {
		t.Errorf("headline = %q\nwant it to start with %q", p.Headline, want)
	}
	col := slices.Index(p.Outcomes.Head, "paired against bf16")
	if col < 0 {
		t.Fatalf("verdict table has no paired column: %q", p.Outcomes.Head)
	}
	if got := p.Outcomes.Rows[1][col]; !strings.HasPrefix(got, word+": Δ") || !strings.Contains(got, fmt.Sprintf("%d flips", eq.B+eq.C)) {
		t.Errorf("int8's paired cell = %q, want %s with Δ and flips", got, word)
	}
	if got := p.Outcomes.Rows[0][col]; got != "the baseline variant" {
		t.Errorf("bf16's paired cell = %q", got)
	}
	if len(p.Cards) != 2 || p.Cards[1].Paired.K != word+" to bf16" || p.Cards[0].PairedClass != "base" {
		t.Fatalf("cards = %+v", p.Cards)
	}
	for _, c := range p.Cards {
		if c.Interactive.Level == "" || c.Interactive.Why == "" || c.Offline.Level == "" || c.Offline.Why == "" || c.StateClass == "" {
			t.Errorf("card %s lacks an objective or its why: %+v", c.Variant, c)
		}
	}
	sheet := map[string]string{}
	for _, kv := range p.Series[0].Sheet {
		sheet[kv.K] = kv.V
	}
	if !strings.Contains(sheet["Offline objective"], "most accepted documents/hour") {
		t.Errorf("sheet's offline objective = %q", sheet["Offline objective"])
	}
	// The int8 series' selection sheet marks the verdict as select does:
	// not shown equivalent, it is no candidate (the protocol's default).
	for _, sp := range p.Series {
		var got string
		for _, kv := range sp.Sheet {
			if kv.K == "Paired against bf16 (select's criterion)" {
				got = kv.V
			}
		}
		switch {
		case sp.Variant == "bf16" && got != "":
			t.Errorf("the baseline's sheet has a paired line %q", got)
		case sp.Variant == "int8" && (!strings.HasPrefix(got, word+" ") || word != "EQUIVALENT" && !strings.Contains(got, "not a candidate")):
			t.Errorf("int8's sheet paired line = %q, want %s and, not equivalent, no candidate", got, word)
		}
	}
}
