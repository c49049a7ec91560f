// Package report writes the report of a results directory: report.html, one
// self-contained page that opens offline (uPlot and the data inlined, no
// network), and report.md with the same tables. Both lead with the selection
// sheet (engine, model, GPU, the recommended level (concurrency, batch size,
// request rate or context length) with its margin and what broke) and keep the interactive objective (TTFT, E2E) apart
// from the offline one (corpus time, documents/hour, tokens/s).
//
// Every figure and verdict comes from eval's one aggregator through
// results.RunData (Series, Outcomes), as on stdout and in compare. Document text and model output are data, never
// markup: html/template escapes them in the page, and the chart data is
// embedded as JSON through html/template's JavaScript escaper, so a document
// containing <script> shows as text and never runs.
package report

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	texttemplate "text/template"

	"github.com/extractbench/extractbench/results/compare"
	"github.com/extractbench/extractbench/results/plan"
)

// The files Write creates in the results directory.
const (
	HTMLFile     = "report.html"
	MarkdownFile = "report.md"
)

//go:embed assets/uPlot.iife.min.js assets/uPlot.min.css assets/report.js assets/report.css
var assets embed.FS

//go:embed templates/report.html.tmpl templates/report.md.tmpl
var templates embed.FS

var (
	htmlTmpl = template.Must(template.New("report.html.tmpl").Funcs(template.FuncMap{
		"code":    func(t table, i int) bool { return i < len(t.Code) && t.Code[i] },
		"numeric": numeric,
		"figure":  figurePart,
		"spread":  spreadPart,
		// lastHead names a table's last column: a verdict column stays in
		// sight while the others scroll.
		"lastHead": func(t table) string {
			if len(t.Head) == 0 {
				return ""
			}
			return t.Head[len(t.Head)-1]
		},
	}).ParseFS(templates, "templates/report.html.tmpl"))
	mdTmpl = texttemplate.Must(texttemplate.New("report.md.tmpl").Funcs(texttemplate.FuncMap{
		"mdtable": mdTable,
		"mdtext":  mdText,
	}).ParseFS(templates, "templates/report.md.tmpl"))
)

// numericCell matches a table cell that is a figure: a number with an
// optional unit and range. Figures align right, words left.
var numericCell = regexp.MustCompile(`^(–|-?[0-9][0-9.,]*( ?[a-zµ%/]+)?([0-9.]+[a-zµ]+)*( \(.*\))?)$`)

func numeric(s string) bool { return numericCell.MatchString(s) }

// figurePart and spreadPart split a figure with its range, "74.6ms
// (97.6ms–420ms)", so that the page sets the range under the figure and a
// wide table still fits the window.
func figurePart(s string) string {
	if i := strings.Index(s, " ("); i > 0 {
		return s[:i]
	}
	return s
}

func spreadPart(s string) string {
	if i := strings.Index(s, " ("); i > 0 {
		return s[i+1:]
	}
	return ""
}

// page is what both templates render.
type page struct {
	Title     string
	Simulated bool
	// RandomWeights: a model with random weights answered, so acceptance,
	// failure classes and field scores say nothing; timing and memory stand.
	RandomWeights bool
	// Drift says, per variant whose engine tokenised prompts otherwise than
	// expected, how many and by how much (extractbench.PromptDrift.Sentence): what
	// the engine was sent, before any figure of what it answered.
	Drift []string
	// TokenCounts says, per variant whose engine reported completion token
	// counts the client's chunks contradict, how many
	// (results.Outcome.TokenCountSentence): its token figures rest on them.
	TokenCounts []string
	Run         []kv
	Headline    string // the summary's first sentence: the paired verdicts, the best passing variant, or that none passed
	// Cards are the first screen: per variant its verdict, paired verdict,
	// both objectives and what failed, each with why.
	Cards    []card
	Outcomes table  // one row per variant: state, verdict and why, failed and interrupted variants included
	Shards   *table // a merged run's shards; nil otherwise
	Notes    []string
	Series   []seriesPage
	// Overlays draw every variant on one chart per figure, above the
	// per-variant sections; none when the run has one series per mode.
	Overlays []chart
	Data     pageData // embedded as JSON for report.js
}

// seriesPage is one variant and mode.
type seriesPage struct {
	ID, Variant, Unit string
	Sheet             []kv
	Charts            []chart
	Omitted           []string // charts left out, with why
	Tables            []table
	Decisions         []string
}

// pageData is the JSON report.js reads.
type pageData struct {
	Charts []chart `json:"charts"`
}

// Write reads dir/results.db (the latest run) and writes dir/report.html and
// dir/report.md. Each file is written to a temporary name and renamed, so a
// crash never leaves half a report.
func Write(ctx context.Context, dir string) error { return WriteWith(ctx, dir, Options{}) }

// WriteWith is Write with options (a price file for the cost lines).
func WriteWith(ctx context.Context, dir string, opts Options) error {
	p, err := build(ctx, dir, opts)
	if err != nil {
		return err
	}
	html, md, err := render(p)
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, HTMLFile), html); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, MarkdownFile), md)
}

// build reads a results directory into a page.
func build(ctx context.Context, dir string, opts Options) (*page, error) {
	d, err := load(ctx, dir)
	if err != nil {
		return nil, err
	}
	dc := decide(ctx, d, opts)
	m := &d.Manifest
	outcomes := d.Outcomes()
	paired, err := compare.PairedVerdicts(ctx, dir, d.RunData)
	if err != nil {
		return nil, err
	}
	base := compare.BaselineVariant(m)
	p := &page{Title: "extractbench report: " + d.Run.RunID, Run: runLines(d, m), Outcomes: outcomeRows(m, outcomes, paired, base),
		Headline: headline(m, outcomes, paired), Shards: shardTable(m), Cards: cards(m, outcomes, paired, base)}
	p.Simulated = d.Simulated() || m.Engine.Simulated
	for _, v := range m.Variants {
		p.Simulated = p.Simulated || v.Engine.Simulated
		p.RandomWeights = p.RandomWeights || v.Engine.RandomWeights
	}
	for _, o := range outcomes {
		if line := o.Tokenization.Sentence(); line != "" {
			p.Drift = append(p.Drift, o.Variant+": "+line+".")
		}
		if line := o.TokenCountSentence(); line != "" {
			p.TokenCounts = append(p.TokenCounts, o.Variant+": "+line+".")
		}
	}
	if d.Runs > 1 {
		p.Notes = append(p.Notes, fmt.Sprintf("results.db holds %d runs; this report reads the latest, %s.", d.Runs, d.Run.RunID))
	}
	texts, textNote := corpusTexts(dir, m.Corpus)
	if textNote != "" {
		p.Notes = append(p.Notes, textNote)
	}
	all := buildSeries(d)
	if len(all) == 0 {
		p.Notes = append(p.Notes, "The run has no pass yet: nothing to judge.")
	}
	obj := objectivesOf(m.Acceptance)
	p.Overlays = overlays(all, obj)
	p.Data.Charts = append(p.Data.Charts, p.Overlays...)
	for i, s := range all {
		prefix := fmt.Sprintf("s%d-", i)
		gpu := m.Variant(s.Variant).GPU
		sp := seriesPage{ID: prefix + "series", Variant: s.Variant, Unit: unitName(s.Mode),
			Sheet:     append(sheet(m, s), dc.lines(m, s)...),
			Tables:    seriesTables(prefix, s, texts, textNote),
			Decisions: decisionLines(d, s.Variant)}
		if p := compare.PairedOf(paired, s.Variant); p != nil {
			eq := plan.Equivalence{Paired: *p, Required: m.Acceptance.SelectNeedsEquivalence()}
			sp.Sheet = append(sp.Sheet, kv{"Paired against " + p.Baseline + " (select's criterion)", eq.Mark()})
		}
		if line := replicasLine(m, s); line != "" {
			sp.Sheet = append(sp.Sheet, kv{"Replicas", line})
		}
		if t, ok := replicasTable(prefix, unitName(s.Mode), m, s); ok {
			sp.Tables = append(sp.Tables, t)
		}
		sp.Charts, sp.Omitted = charts(prefix, s, d.Telemetry, gpu.MemoryTotalBytes, obj)
		p.Series = append(p.Series, sp)
		p.Data.Charts = append(p.Data.Charts, sp.Charts...)
	}
	return p, nil
}

// render executes both templates.
func render(p *page) (html, md []byte, err error) {
	js, err := assets.ReadFile("assets/uPlot.iife.min.js")
	if err != nil {
		return nil, nil, fmt.Errorf("read embedded uPlot: %w", err)
	}
	css, _ := assets.ReadFile("assets/uPlot.min.css")
	ownJS, _ := assets.ReadFile("assets/report.js")
	ownCSS, _ := assets.ReadFile("assets/report.css")
	var hb bytes.Buffer
	err = htmlTmpl.Execute(&hb, struct {
		*page
		// The vendored and own assets are trusted constants of this binary,
		// so they are inlined as is; everything read from the run is not.
		UPlotJS, ReportJS template.JS
		CSS               template.CSS
	}{p, template.JS(js), template.JS(ownJS), template.CSS(string(css) + "\n" + string(ownCSS))})
	if err != nil {
		return nil, nil, fmt.Errorf("render %s: %w", HTMLFile, err)
	}
	var mb bytes.Buffer
	if err := mdTmpl.Execute(&mb, p); err != nil {
		return nil, nil, fmt.Errorf("render %s: %w", MarkdownFile, err)
	}
	return hb.Bytes(), mb.Bytes(), nil
}

func writeFile(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(f.Name()) // no-op after the rename
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
