package plan

import (
	"context"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strings"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/numfmt"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/compare"
	"github.com/extractbench/extractbench/sizing"
)

// SelectCriteria are what a configuration must meet to be ranked, and
// what its plans are made for.
type SelectCriteria struct {
	Docs         int     `json:"docs"`          // the corpus to plan for
	DeadlineDays float64 `json:"deadline_days"` // 0 = none: cards that finish Docs by then, and their cost
	Days         []int   `json:"rental_days"`   // nil = DefaultRentalDays
	// MinAccepted, when above 0, is a quality floor over the run's own:
	// the baseline's pooled accepted share must reach it.
	MinAccepted float64 `json:"min_accepted,omitempty"`
	// MaxCards, when above 0, is the most cards the deadline may take.
	MaxCards int `json:"max_cards,omitempty"`
}

// SelectRow is one configuration (run, variant, card) in the selection sheet.
type SelectRow struct {
	Rank int `json:"rank"` // 1 = best of those that meet the criteria; 0 = does not meet them
	// Tied is set when the row's figure is not apart from the row above's
	// beyond the spread their repetitions measured: it shares its rank.
	Tied bool `json:"tied,omitempty"`
	// perHour is accepted documents/hour at the recommended level over its
	// repetitions: what a ranking's difference is judged against.
	perHour       eval.Spread
	Meets         bool              `json:"meets"`
	Why           []string          `json:"why,omitempty"` // what it misses
	Dir           string            `json:"dir"`
	RunID         string            `json:"run_id"`
	Variant       string            `json:"variant"`
	Model         string            `json:"model"`
	Simulated     bool              `json:"simulated"`
	RandomWeights bool              `json:"random_weights"`
	Weights       sizing.Precision  `json:"weights"`
	Engine        string            `json:"engine"` // kind and version
	GPU           string            `json:"gpu"`
	Env           sizing.EnvCheck   `json:"environment"`
	CardBytes     int64             `json:"card_bytes,omitempty"`
	ContextWindow int               `json:"context_window,omitempty"`
	State         string            `json:"state"` // results.Outcome's
	Mode          extractbench.Mode `json:"mode"`
	Recommended   int               `json:"recommended"`
	// Interactive and Offline are the two objectives' answers with their
	// reasons (eval.Recommendation); Recommended is the interactive level.
	Interactive string        `json:"interactive"`
	Offline     *eval.Offline `json:"offline,omitempty"`
	// BaselineAccepted is the baseline level's pooled accepted share.
	BaselineAccepted *float64 `json:"baseline_accepted"`
	// Equivalence is the paired verdict against the run's baseline
	// variant; nil for that variant and for a run of one variant.
	Equivalence *Equivalence `json:"equivalence,omitempty"`
	// PairedBaseline is set on the variant every other of its run is
	// paired with (a run of several variants).
	PairedBaseline bool `json:"paired_baseline,omitempty"`
	// Peaks at the recommended level (the highest over its repetitions).
	PeakDeviceBytes *int64             `json:"peak_device_bytes"`
	PeakTorchAlloc  *int64             `json:"peak_torch_allocated_bytes"`
	Phases          *Phases            `json:"phases,omitempty"`
	Plan            *sizing.PlanResult `json:"plan,omitempty"`
}

// Select reads every run directory and makes one row per variant, planned
// for the criteria and priced when prices price its card, then ranks those
// that meet the criteria: PASS, a usable level, shown equivalent to the
// run's baseline variant (unless its protocol sets
// acceptance.select_requires_equivalence: false), the quality floor, the
// deadline within MaxCards; cheapest per 1,000 accepted documents first
// when priced, else the most accepted documents per hour.
func Select(ctx context.Context, dirs []string, c SelectCriteria, prices *sizing.Prices) ([]SelectRow, error) {
	var rows []SelectRow
	for _, dir := range dirs {
		run, err := results.LoadRun(ctx, dir)
		if err != nil {
			return nil, fmt.Errorf("select: %w", err)
		}
		phases, err := MeasurePhases(ctx, run)
		if err != nil {
			return nil, fmt.Errorf("select %s: %w", dir, err)
		}
		plans, err := PlanRun(run, c.Docs, c.Days)
		if err != nil {
			plans = nil // a run with no complete pass still gets its rows, without plans
		}
		eqs, err := Equivalences(ctx, run)
		if err != nil {
			return nil, fmt.Errorf("select %s: %w", dir, err)
		}
		base := ""
		if len(eqs) > 0 {
			base = compare.BaselineVariant(&run.Manifest)
		}
		for _, o := range run.Outcomes() {
			r := selectRow(run, o, plans, phases, eqs[o.Variant], c, prices)
			r.PairedBaseline = o.Variant == base
			rows = append(rows, r)
		}
	}
	rank(rows)
	return rows, nil
}

func selectRow(run *results.RunData, o results.Outcome, plans []sizing.PlanResult, phases map[string]Phases, eq *Equivalence, c SelectCriteria, prices *sizing.Prices) SelectRow {
	vm := run.Manifest.Variant(o.Variant)
	r := SelectRow{Dir: run.Dir, RunID: run.Run.RunID, Variant: o.Variant, Model: vm.Engine.Model, Simulated: run.Simulated(),
		RandomWeights: vm.Engine.RandomWeights, Weights: sizing.VariantPrecision(vm), Engine: strings.TrimSpace(vm.Engine.Kind + " " + vm.Engine.Version),
		GPU: vm.GPU.Name, CardBytes: vm.GPU.MemoryTotalBytes, ContextWindow: vm.Engine.ContextWindow, State: o.State,
		BaselineAccepted: o.BaselineShare, Equivalence: eq}
	r.Env = sizing.CheckEnvironment(vm.GPU.Name, vm.GPU.CUDA, vm.GPU.Driver, vm.Engine.Version, r.Weights, sizing.BF16)
	if ph, ok := phases[o.Variant]; ok {
		r.Phases = &ph
	}
	var rec *eval.Recommendation
	if len(o.Series) > 0 { // the sheet has one row a variant: its first mode measured decides
		s := &o.Series[0]
		rec = &s.Recommendation
		r.Mode, r.Recommended = s.Mode, s.Recommendation.Recommended
		off := s.Recommendation.Offline
		r.Interactive, r.Offline = s.Recommendation.Interactive(), &off
		if l := s.Level(r.Recommended); l != nil {
			r.PeakDeviceBytes, r.PeakTorchAlloc = l.PeakGPUMemBytes, l.PeakTorchAllocatedBytes
			r.perHour = l.DocsPerHour
		}
	}
	for i := range plans {
		if plans[i].Variant == o.Variant && plans[i].DocsPerHour > 0 {
			p := plans[i]
			r.Plan = &p
		}
	}
	if r.Plan != nil && prices != nil {
		if price, err := prices.For(r.GPU); err == nil {
			r.Plan.AddCost(prices, price, c.DeadlineDays)
		}
	}
	if o.State != results.OutcomePass {
		r.Why = append(r.Why, "state "+o.State)
	}
	if rec == nil || !rec.Usable() {
		r.Why = append(r.Why, "no usable level")
	}
	if eq != nil && eq.Fails() && eq.Required {
		r.Why = append(r.Why, eq.Short())
	}
	if c.MinAccepted > 0 && (o.BaselineShare == nil || *o.BaselineShare < c.MinAccepted) {
		r.Why = append(r.Why, fmt.Sprintf("accepted %s < %.1f%%", pct(o.BaselineShare), c.MinAccepted*100))
	}
	if c.DeadlineDays > 0 && r.Plan != nil {
		cards := r.Plan.CardsFor(int64(c.DeadlineDays * 24 * 3600 * 1e9))
		switch {
		case cards == 0:
			r.Why = append(r.Why, "preparation alone exceeds the deadline")
		case c.MaxCards > 0 && cards > c.MaxCards:
			r.Why = append(r.Why, fmt.Sprintf("%d cards for the deadline > %d", cards, c.MaxCards))
		}
	}
	if prices != nil && r.Plan != nil && r.Plan.Cost == nil {
		r.Why = append(r.Why, "no price for "+r.GPU)
	}
	r.Meets = len(r.Why) == 0
	return r
}

// rank orders rows: those that meet the criteria first, cheapest per 1,000
// accepted documents (when priced) or most accepted per hour; ties by
// directory and variant so the order is stable.
func rank(rows []SelectRow) {
	cost := func(r SelectRow) float64 {
		if r.Plan != nil && r.Plan.Cost != nil {
			return r.Plan.Cost.PerThousandAccepted
		}
		return 0
	}
	rate := func(r SelectRow) float64 {
		if r.Plan != nil {
			return r.Plan.AcceptedPerHour
		}
		return 0
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.Meets != b.Meets {
			return a.Meets
		}
		ca, cb := cost(a), cost(b)
		if (ca > 0) != (cb > 0) {
			return ca > 0 // a known cost per accepted document ranks before none
		}
		if ca != cb {
			return ca < cb
		}
		if ra, rb := rate(a), rate(b); ra != rb {
			return ra > rb
		}
		if a.Dir != b.Dir {
			return a.Dir < b.Dir
		}
		return a.Variant < b.Variant
	})
	n := 0
	for i := range rows {
		rows[i].Rank, rows[i].Tied = 0, false
		if !rows[i].Meets {
			continue
		}
		n++
		rows[i].Rank = n
		if i > 0 && rows[i-1].Meets && !rankApart(rows[i-1], rows[i]) {
			rows[i].Rank, rows[i].Tied = rows[i-1].Rank, true
		}
	}
}

// rankApart reports whether two ranked rows differ beyond the spread their
// repetitions measured (the dispersion rule, MEASUREMENT.md section 12):
// their accepted documents/hour, or, when both are priced, their cost per
// accepted document (price over that rate), have ranges that do not
// overlap. One repetition gives no spread, so no order.
func rankApart(a, b SelectRow) bool {
	sa, sb := a.perHour, b.perHour
	if ca, cb := pricePerHour(a.Plan), pricePerHour(b.Plan); ca > 0 && cb > 0 {
		sa, sb = perAccepted(sa, ca), perAccepted(sb, cb)
	}
	apart, _ := eval.Apart(sa, sb)
	return apart
}

// perAccepted turns a spread of accepted documents/hour into one of cost
// per accepted document at price per card-hour.
func perAccepted(s eval.Spread, price float64) eval.Spread {
	if s.Min <= 0 {
		return eval.Spread{}
	}
	return eval.Spread{N: s.N, Median: price / s.Median, Min: price / s.Max, Max: price / s.Min}
}

// SelectSheet is the selection sheet's cells, one row per configuration:
// what the Markdown and HTML forms print.
func SelectSheet(rows []SelectRow) (header []string, cells [][]string) {
	header = []string{"rank", "configuration", "environment", "memory per card", "context", "recommended", "quality", "paired verdict", "throughput",
		"cost / 1,000 accepted", "plans", "criteria"}
	for _, r := range rows {
		rk := "–"
		if r.Rank > 0 {
			rk = fmt.Sprint(r.Rank)
		}
		if r.Tied {
			rk += "="
		}
		conf := fmt.Sprintf("%s: %s (%s) on %s", r.Variant, r.Model, r.Weights, orDash(r.GPU))
		var flags []string
		if r.Simulated {
			flags = append(flags, "SIMULATED")
		}
		if r.RandomWeights {
			flags = append(flags, "random weights: quality means nothing")
		}
		if len(flags) > 0 {
			conf += " [" + strings.Join(flags, "; ") + "]"
		}
		env := fmt.Sprintf("%s; %s; driver %s, CUDA %s", orDash(r.Engine), orDash(r.Env.Arch), orDash(r.Env.Driver), orDash(r.Env.CUDA))
		if len(r.Env.Problems) > 0 {
			env += "; CHECK: " + strings.Join(r.Env.Problems, "; ")
		}
		mem := "peak " + optBytes(r.PeakDeviceBytes)
		if r.CardBytes > 0 {
			mem += " of " + numfmt.GiBString(r.CardBytes)
		}
		if r.PeakTorchAlloc != nil {
			mem += ", torch " + numfmt.GiBString(*r.PeakTorchAlloc)
		}
		if p := r.Phases; p != nil {
			mem += fmt.Sprintf("; phases at level %d: load %s, long prefill %s, generation %s", p.Level,
				optBytes(p.AfterLoadBytes), optBytes(p.LongPrefillPeak), optBytes(p.GenerationPeak))
		}
		ctx := "–"
		if r.ContextWindow > 0 {
			ctx = numfmt.GroupDigits(int64(r.ContextWindow))
		}
		recd := "interactive: none"
		if r.Recommended > 0 {
			recd = "interactive: " + eval.LevelLabel(r.Mode, r.Recommended)
		}
		recd += "; " + offlineShort(r.Mode, r.Offline)
		thr, cost, plans := "–", "–", "–"
		if p := r.Plan; p != nil {
			_, accepted, tokens := p.PassRates()
			thr = fmt.Sprintf("in passes %s accepted/h, %s output tok/s; sustained %s accepted/h, %s docs/h", accepted,
				tokens, eval.FormatRate(p.SustainedAcceptedPerHour), eval.FormatRate(p.DocsPerHour))
			var ps []string
			for _, rt := range p.Rentals {
				s := fmt.Sprintf("%dd: %s", rt.Days, cardsShort(rt.CardsNeeded))
				if rt.Cost != nil {
					s += " " + numfmt.Money(*rt.Cost)
				}
				ps = append(ps, s)
			}
			plans = fmt.Sprintf("%s docs in %.2f days on 1 card; ", numfmt.GroupDigits(int64(p.CorpusDocs)), p.CorpusDays) + strings.Join(ps, ", ")
			if c := p.Cost; c != nil {
				cost = fmt.Sprintf("%s %s", numfmt.Money(c.PerThousandAccepted), c.Currency)
				if c.PerThousandAccepted == 0 {
					cost = fmt.Sprintf("none accepted (%s %s per 1,000 documents)", numfmt.Money(c.PerThousandDocs), c.Currency)
				}
				if c.Placeholder {
					cost += " (PLACEHOLDER prices)"
				}
				if c.DeadlineDays > 0 {
					plans += fmt.Sprintf("; deadline %g days: %s, %s %s", c.DeadlineDays, cardsShort(c.CardsForDeadline), numfmt.Money(c.DeadlineCost), c.Currency)
				}
			}
		}
		crit := "meets"
		if !r.Meets {
			crit = "no: " + strings.Join(r.Why, "; ")
		}
		paired := "–"
		if r.PairedBaseline {
			paired = "the baseline variant: the others of its run are paired with it"
		}
		if e := r.Equivalence; e != nil {
			paired = e.Text()
			if r.Meets && e.Fails() {
				crit += " (" + e.Short() + ": the protocol does not require equivalence)"
			}
		}
		cells = append(cells, []string{rk, conf, env, mem, ctx, recd, pct(r.BaselineAccepted), paired, thr, cost, plans, crit})
	}
	return header, cells
}

// offlineShort is the offline objective in a few words for the sheet's
// cell: "offline: concurrency 32, 958,857 accepted/h, corpus in 1.1s".
func offlineShort(mode extractbench.Mode, o *eval.Offline) string {
	switch {
	case o == nil:
		return "offline: not judged"
	case !o.Asked:
		return "offline: not asked"
	case o.Level == 0:
		return "offline: none"
	}
	return fmt.Sprintf("offline: %s %s, %s accepted/h, corpus in %s", mode, eval.LevelName(mode, o.Level), eval.FormatRate(o.DocsPerHour), eval.FormatDuration(o.CorpusTimeNS))
}

// writeObjectives writes each row's two objectives with their reasons,
// below the sheet.
func writeObjectives(ew *numfmt.Writer, rows []SelectRow) {
	ew.Printf("\nObjectives, with why (in the sheet's order):\n")
	for _, r := range rows {
		off := "not judged"
		if r.Offline != nil {
			off = r.Offline.Why
		}
		ew.Printf("- %s: interactive: %s; offline: %s\n", r.Variant, orDash(r.Interactive), off)
	}
}

// WriteSelectMarkdown writes the selection sheet as a Markdown table.
func WriteSelectMarkdown(w io.Writer, rows []SelectRow, c SelectCriteria) error {
	ew := &numfmt.Writer{W: w}
	header, cells := SelectSheet(rows)
	ew.Printf("# Selection sheet\n\n%s\n\n", criteriaLine(c))
	ew.Printf("| %s |\n|%s\n", strings.Join(header, " | "), strings.Repeat("---|", len(header)))
	for _, row := range cells {
		for i := range row {
			row[i] = strings.ReplaceAll(row[i], "|", "\\|")
		}
		ew.Printf("| %s |\n", strings.Join(row, " | "))
	}
	writeObjectives(ew, rows)
	ew.Printf("\nMemory in GiB (2^30 B): the device peak (nvidia-smi) and torch's peak allocated at the recommended level, never added; phases from the baseline pass where the telemetry has samples (n/a: none fell in the phase). Throughput: in passes, each pass's accepted documents per hour of its duration, median over the level's repetitions (the figure stdout and the report show); sustained, that over a campaign (evaluation overhead included; docs/h also retries); cost per 1,000 accepted = 1,000 × price per card-hour / sustained accepted per hour; a plan's cards work in parallel, each billed for the whole rental. A rank marked = shares the rank above: its accepted/h (its cost, when both are priced) is not apart from that row's beyond the spread their repetitions measured (one repetition has none).\n")
	if ew.Err != nil {
		return fmt.Errorf("write selection sheet: %w", ew.Err)
	}
	return nil
}

var selectHTML = template.Must(template.New("select").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>extractbench selection sheet</title>
<style>body{font-family:system-ui,sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #bbb;padding:.3em .5em;vertical-align:top;font-size:90%}th{background:#eee}tr.no{color:#777}</style>
</head><body><h1>Selection sheet</h1><p>{{.Criteria}}</p>
<table><tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr class="{{.Class}}">{{range .Cells}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
<p>Memory in GiB (2^30 B): device peak and torch peak allocated at the recommended level, never added. Cost per 1,000 accepted = 1,000 × price per card-hour / sustained accepted per hour.</p>
</body></html>
`))

// WriteSelectHTML writes the selection sheet as one self-contained HTML page.
func WriteSelectHTML(w io.Writer, rows []SelectRow, c SelectCriteria) error {
	header, cells := SelectSheet(rows)
	type row struct {
		Class string
		Cells []string
	}
	data := struct {
		Criteria string
		Header   []string
		Rows     []row
	}{Criteria: criteriaLine(c), Header: header}
	for i, cs := range cells {
		cl := "yes"
		if !rows[i].Meets {
			cl = "no"
		}
		data.Rows = append(data.Rows, row{Class: cl, Cells: cs})
	}
	if err := selectHTML.Execute(w, data); err != nil {
		return fmt.Errorf("write selection sheet: %w", err)
	}
	return nil
}

func criteriaLine(c SelectCriteria) string {
	s := fmt.Sprintf("Criteria: each run's own acceptance verdict (PASS), a usable level and, unless its protocol sets acceptance.select_requires_equivalence: false, a paired verdict EQUIVALENT to its baseline variant; plans for %s documents", numfmt.GroupDigits(int64(c.Docs)))
	if c.MinAccepted > 0 {
		s += fmt.Sprintf("; baseline accepted ≥ %.1f%%", c.MinAccepted*100)
	}
	if c.DeadlineDays > 0 {
		s += fmt.Sprintf("; deadline %g days", c.DeadlineDays)
		if c.MaxCards > 0 {
			s += fmt.Sprintf(" with at most %d cards", c.MaxCards)
		}
	}
	return s + "."
}

func cardsShort(n int) string {
	if n == 0 {
		return "impossible"
	}
	if n == 1 {
		return "1 card"
	}
	return fmt.Sprintf("%d cards", n)
}

func orDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "–"
	}
	return s
}

func pct(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", *v*100)
}

// pricePerHour is a plan's price per card-hour; 0 with no plan or price.
func pricePerHour(p *sizing.PlanResult) float64 {
	if p == nil || p.Cost == nil {
		return 0
	}
	return p.Cost.PerCardHour
}
