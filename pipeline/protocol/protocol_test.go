package protocol

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
)

const validProtocol = `name: p
corpus: default
prompt:
  user: "Extract.\n\n{{document}}"
generation: {max_tokens: 128, temperature: 0, seed: 7}
acceptance: {min_accepted: 0.95}
sweep: {mode: concurrency, levels: [1, 4], repetitions: 2}
variants:
  - name: a
    engine: {url: builtin, model: sim-8b}
`

func TestLoadProtocol_Default(t *testing.T) {
	p, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Levels(), []int{1, 2, 4, 8, 16, 32, 64}; !slices.Equal(got, want) {
		t.Errorf("levels = %v, want %v", got, want)
	}
	if p.Sweep.Repetitions != 3 || p.Sweep.Warmup != 8 || p.Corpus != "default" || len(p.Variants) != 2 {
		t.Errorf("default protocol = %+v", p)
	}
}

func TestParseProtocol_Defaults(t *testing.T) {
	p, err := Parse([]byte(validProtocol), "p.yaml", ".")
	if err != nil {
		t.Fatal(err)
	}
	if p.Parse != "strict" || p.OutputSchema != "default" || p.Sweep.OnMemoryFailure != DefaultOnMemoryFailure ||
		time.Duration(p.RequestTimeout) != DefaultRequestTimeout || p.Acceptance.MinBaselineRatio != extractbench.DefaultMinBaselineRatio ||
		time.Duration(p.Variants[0].Engine.ReadyTimeout) != DefaultReadyTimeout || p.Variants[0].Engine.Kind != "builtin" {
		t.Errorf("defaults not filled: %+v", p)
	}
}

// TestParseProtocol_EndMarker: a "---" that ends the file starts no
// document: nothing is ignored, so nothing is refused.
// TestParseProtocol_SelectRequiresEquivalence: select ranks only variants
// shown equivalent to the baseline variant unless the protocol says false.
func TestParseProtocol_SelectRequiresEquivalence(t *testing.T) {
	for _, tt := range []struct {
		set  string
		want bool
	}{{"", true}, {", select_requires_equivalence: true", true}, {", select_requires_equivalence: false", false}} {
		p, err := Parse([]byte(strings.Replace(validProtocol, "min_accepted: 0.95", "min_accepted: 0.95"+tt.set, 1)), "p.yaml", ".")
		if err != nil {
			t.Fatalf("%q: %v", tt.set, err)
		}
		if got := p.Acceptance.SelectNeedsEquivalence(); got != tt.want {
			t.Errorf("%q: SelectNeedsEquivalence() = %v, want %v", tt.set, got, tt.want)
		}
	}
}

func TestParseProtocol_EndMarker(t *testing.T) {
	for _, end := range []string{"---\n", "...\n", "---\n# nothing more\n"} {
		if _, err := Parse([]byte(validProtocol+end), "p.yaml", "."); err != nil {
			t.Errorf("protocol ending with %q: %v", end, err)
		}
	}
}

func TestParseProtocol_JSON(t *testing.T) {
	js := `{"name": "j", "corpus": "default", "prompt": {"user": "{{document}}"}, "generation": {"max_tokens": 8},
	"acceptance": {"min_accepted": 0.5}, "sweep": {"mode": "batch", "levels": [2, 1]}, "request_timeout": "3s",
	"variants": [{"name": "a", "engine": {"url": "http://127.0.0.1:8000", "model": "m"}}]}`
	p, err := Parse([]byte(js), "p.json", ".")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Levels(), []int{1, 2}; !slices.Equal(got, want) {
		t.Errorf("levels = %v, want the baseline first: %v", got, want)
	}
	if time.Duration(p.RequestTimeout) != 3*time.Second {
		t.Errorf("request_timeout = %v", time.Duration(p.RequestTimeout))
	}
}

// TestParseProtocol_MaxAnswerBytes: the key is read, and a protocol that
// leaves it out keeps its canonical form (and fingerprint) as before.
func TestParseProtocol_MaxAnswerBytes(t *testing.T) {
	p, err := Parse([]byte(validProtocol+"max_answer_bytes: 1048576\n"), "p.yaml", ".")
	if err != nil {
		t.Fatal(err)
	}
	if p.MaxAnswerBytes != 1<<20 || !strings.Contains(string(p.Canonical()), `"max_answer_bytes":1048576`) {
		t.Errorf("max_answer_bytes = %d, canonical %s", p.MaxAnswerBytes, p.Canonical())
	}
	q, err := Parse([]byte(validProtocol), "p.yaml", ".")
	if err != nil {
		t.Fatal(err)
	}
	if q.MaxAnswerBytes != 0 || strings.Contains(string(q.Canonical()), "max_answer_bytes") {
		t.Errorf("unset max_answer_bytes = %d, canonical %s; want 0 and left out", q.MaxAnswerBytes, q.Canonical())
	}
}

// TestParseProtocol_Cache: cache is reset unless the protocol says keep,
// always in the canonical form (a run that reset and one that kept have
// different fingerprints), and any other value is refused at its line.
func TestParseProtocol_Cache(t *testing.T) {
	canon := map[string]string{}
	for _, tt := range []struct{ key, want string }{{"", CacheReset}, {"cache: reset\n", CacheReset}, {"cache: keep\n", CacheKeep}} {
		p, err := Parse([]byte(validProtocol+tt.key), "p.yaml", ".")
		if err != nil {
			t.Fatalf("%q: %v", tt.key, err)
		}
		if p.Cache != tt.want || !strings.Contains(string(p.Canonical()), `"cache":"`+tt.want+`"`) {
			t.Errorf("%q: cache = %q, canonical %s; want %q in both", tt.key, p.Cache, p.Canonical(), tt.want)
		}
		canon[tt.key] = string(p.Canonical())
	}
	if canon[""] != canon["cache: reset\n"] || canon[""] == canon["cache: keep\n"] {
		t.Error("the default's canonical form differs from cache: reset's, or equals cache: keep's")
	}
	_, err := Parse([]byte(validProtocol+"cache: flush\n"), "p.yaml", ".")
	if err == nil || !strings.Contains(err.Error(), "p.yaml:11: cache:") || !strings.Contains(err.Error(), "reset") {
		t.Errorf("cache: flush: %v, want p.yaml:11: cache: and the allowed values", err)
	}
}

func TestParseProtocol_Errors(t *testing.T) {
	tests := []struct {
		name string
		edit func(string) string
		want []string // each must appear in the error
	}{
		{"unknown key", func(s string) string { return strings.Replace(s, "repetitions: 2", "repetitions: 2, repetitons: 3", 1) },
			[]string{"p.yaml:7: sweep.repetitons: unknown key"}},
		{"bad mode", func(s string) string { return strings.Replace(s, "mode: concurrency", "mode: sideways", 1) },
			[]string{"p.yaml:7: sweep.mode:"}},
		{"bad level", func(s string) string { return strings.Replace(s, "levels: [1, 4]", "levels: [1, 0]", 1) },
			[]string{"p.yaml:7: sweep.levels.1:"}},
		{"threshold above 1", func(s string) string { return strings.Replace(s, "min_accepted: 0.95", "min_accepted: 95", 1) },
			[]string{"p.yaml:6: acceptance.min_accepted:"}},
		{"prompt without the document", func(s string) string { return strings.Replace(s, `\n\n{{document}}`, "", 1) },
			[]string{"p.yaml:4: prompt.user:"}},
		{"missing variants", func(s string) string { return s[:strings.Index(s, "variants:")] },
			[]string{"variants"}},
		{"duplicate variant", func(s string) string { return s + "  - name: a\n    engine: {url: builtin, model: sim-1b}\n" },
			[]string{"p.yaml:11: variants.1.name: duplicate variant name"}},
		{"unknown baseline variant", func(s string) string {
			return strings.Replace(s, "min_accepted: 0.95", "min_accepted: 0.95, baseline_variant: b", 1)
		}, []string{`p.yaml:6: acceptance.baseline_variant: no variant is named "b" (the variants: a)`}},
		{"select equivalence not a boolean", func(s string) string {
			return strings.Replace(s, "min_accepted: 0.95", "min_accepted: 0.95, select_requires_equivalence: sometimes", 1)
		}, []string{"p.yaml:6: acceptance.select_requires_equivalence:"}},
		{"bad objective", func(s string) string {
			return strings.Replace(s, "min_accepted: 0.95", "min_accepted: 0.95, objective: cheapest", 1)
		}, []string{"p.yaml:6: acceptance.objective:"}},
		{"engine url", func(s string) string { return strings.Replace(s, "url: builtin", "url: localhost:8000", 1) },
			[]string{"p.yaml:10: variants.0.engine.url:", "neither builtin nor an http(s) URL"}},
		{"bad duration", func(s string) string { return s + "request_timeout: 2 minutes\n" },
			[]string{"p.yaml:11: request_timeout:"}},
		{"answer cap too small", func(s string) string { return s + "max_answer_bytes: 100\n" },
			[]string{"p.yaml:11: max_answer_bytes:"}},
		{"answer cap not a count", func(s string) string { return s + "max_answer_bytes: 64KiB\n" },
			[]string{"p.yaml:11: max_answer_bytes:"}},
		{"not YAML", func(string) string { return "name: [unclosed\n" }, []string{"p.yaml:"}},
		// Values the schema passes and a decode could not place (hardening issue item 15).
		{"seed beyond an integer", func(s string) string { return strings.Replace(s, "seed: 7", "seed: 1e23", 1) },
			[]string{"p.yaml:5: generation.seed: 1e23 is beyond what an integer key can hold"}},
		{"params beyond an integer", func(s string) string {
			return strings.Replace(s, "model: sim-8b", "model: sim-8b, params: 99999999999999999999", 1)
		},
			[]string{"p.yaml:10: variants.0.engine.params: 99999999999999999999 is beyond"}},
		{"duration too long", func(s string) string { return s + "request_timeout: 9999999999h\n" },
			[]string{"p.yaml:11: request_timeout: 9999999999h is longer than a duration can be"}},
		{"temperature NaN", func(s string) string { return strings.Replace(s, "temperature: 0", "temperature: .nan", 1) },
			[]string{"p.yaml:5: generation.temperature: .nan is not a number"}},
		{"infinite objective", func(s string) string {
			return strings.Replace(s, "min_accepted: 0.95", "min_accepted: 0.95, latency_p95_ms: .inf", 1)
		},
			[]string{"p.yaml:6: acceptance.latency_p95_ms: .inf is not a number"}},
		{"second document", func(s string) string { return s + "---\nname: ignored\n" },
			[]string{"p.yaml:11: (root): a second YAML document"}},
		{"no request timeout", func(s string) string { return s + "request_timeout: 0s\n" },
			[]string{"p.yaml:11: request_timeout: 0s: no timeout is not allowed; give a duration"}},
		{"no ready timeout", func(s string) string {
			return strings.Replace(s, "model: sim-8b", "model: sim-8b, ready_timeout: 0m0s", 1)
		},
			[]string{"p.yaml:10: variants.0.engine.ready_timeout: 0m0s: no timeout is not allowed"}},
		{"no telemetry interval", func(s string) string { return s + "telemetry_interval: 0.0ms\n" },
			[]string{"p.yaml:11: telemetry_interval: 0.0ms is not an interval"}},
		{"values and schema, all reported", func(s string) string {
			return strings.Replace(s, "mode: concurrency", "mode: x", 1) + "request_timeout: 0s\n"
		}, []string{"2 problems", "p.yaml:7: sweep.mode", "p.yaml:11: request_timeout: 0s"}},
		{"several problems, all reported", func(s string) string {
			return strings.Replace(strings.Replace(s, "mode: concurrency", "mode: x", 1), "max_tokens: 128", "max_tokens: 0", 1)
		}, []string{"generation.max_tokens", "sweep.mode"}},
		{"schema and engine url, all reported", func(s string) string {
			return strings.Replace(strings.Replace(s, "mode: concurrency", "mode: x", 1), "url: builtin", "url: localhost:8000", 1)
		}, []string{"2 problems", "p.yaml:7: sweep.mode", "p.yaml:10: variants.0.engine.url:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.edit(validProtocol)), "p.yaml", ".")
			if err == nil {
				t.Fatal("accepted")
			}
			if _, ok := err.(*Error); !ok {
				t.Errorf("error %T, want *Error", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestParseProtocol_Minimal: a protocol that names only its variants gets
// the default protocol's corpus, prompt, generation and sweep, a 95%
// threshold without the default's simulated latency objective, and its
// file's name; a key it writes is kept whole.
func TestParseProtocol_Minimal(t *testing.T) {
	min := "variants:\n  - {name: mine, engine: {url: \"http://127.0.0.1:8000\", model: my-model}}\n"
	p, err := Parse([]byte(min), "/x/nightly run.yaml", "/x")
	if err != nil {
		t.Fatal(err)
	}
	def, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "nightly-run" || p.Corpus != "default" || p.Prompt != def.Prompt || p.Generation.MaxTokens != def.Generation.MaxTokens ||
		!slices.Equal(p.Sweep.Levels, def.Sweep.Levels) || p.Sweep.Repetitions != def.Sweep.Repetitions || p.Sweep.Warmup != def.Sweep.Warmup {
		t.Errorf("minimal protocol = %+v, want the default's corpus, prompt, generation and sweep", p)
	}
	if p.Acceptance.MinAccepted != DefaultMinAccepted || p.Acceptance.LatencyP95MS != 0 {
		t.Errorf("acceptance = %+v, want min_accepted %v and no latency objective", p.Acceptance, DefaultMinAccepted)
	}
	q, err := Parse([]byte(min+"generation: {max_tokens: 256}\n"), "q.yaml", ".")
	if err != nil {
		t.Fatal(err)
	}
	if q.Generation.MaxTokens != 256 || q.Generation.Seed != nil || q.Name != "q" {
		t.Errorf("generation = %+v, name %q; want the written key kept whole, name q", q.Generation, q.Name)
	}
	// The canonical form reads back to the same protocol (print-protocol, resume).
	r, err := Parse(p.Canonical(), "canonical.json", "/x")
	if err != nil {
		t.Fatal(err)
	}
	if string(r.Canonical()) != string(p.Canonical()) {
		t.Errorf("canonical form does not round-trip:\n%s\n%s", p.Canonical(), r.Canonical())
	}
}

// TestParseProtocol_RateSweep: a rate sweep plans the synchronous baseline
// first, defaults to Poisson arrivals, and its keys are refused elsewhere
// with the file, line and field.
func TestParseProtocol_RateSweep(t *testing.T) {
	rate := strings.Replace(validProtocol, "sweep: {mode: concurrency, levels: [1, 4], repetitions: 2}",
		"sweep: {mode: rate, levels: [5, 10, 20], repetitions: 2, max_in_flight: 64}", 1)
	p, err := Parse([]byte(rate), "p.yaml", ".")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Levels(), []int{0, 5, 10, 20}; !slices.Equal(got, want) {
		t.Errorf("rate levels = %v, want %v (the synchronous baseline first)", got, want)
	}
	if p.Sweep.Arrival != "poisson" || p.Sweep.MaxInFlight != 64 {
		t.Errorf("sweep = %+v, want poisson arrivals and max_in_flight 64", p.Sweep)
	}
	for in, want := range map[string]string{
		"sweep: {mode: concurrency, levels: [1, 4], repetitions: 2, arrival: constant}":      "p.yaml:7: sweep.arrival: only for mode: rate",
		"sweep: {mode: rate, levels: [4], arrival: constant, burstiness: 0.5}":               "p.yaml:7: sweep.burstiness: shapes Poisson gaps",
		"sweep: {mode: rate, levels: [4], arrival: uniform}":                                 "sweep.arrival",
		"acceptance: {min_accepted: 0.95, ttft_p99_ms: 0}\nsweep: {mode: rate, levels: [4]}": "acceptance.ttft_p99_ms",
	} {
		src := strings.Replace(validProtocol, "sweep: {mode: concurrency, levels: [1, 4], repetitions: 2}", in, 1)
		if strings.HasPrefix(in, "acceptance") {
			src = strings.Replace(strings.Replace(validProtocol, "acceptance: {min_accepted: 0.95}\n", "", 1), "sweep: {mode: concurrency, levels: [1, 4], repetitions: 2}", in, 1)
		}
		_, err := Parse([]byte(src), "p.yaml", ".")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error with %q", in, err, want)
		}
	}
}

// TestParseProtocol_AutoLevels: levels: auto is a rate sweep's; it plans
// only the synchronous baseline (the rates are chosen as they are
// measured), fills auto_levels, and is written back as "auto" so that a
// resumed run reads its own protocol again.
func TestParseProtocol_AutoLevels(t *testing.T) {
	auto := strings.Replace(validProtocol, "sweep: {mode: concurrency, levels: [1, 4], repetitions: 2}",
		"sweep: {mode: rate, levels: auto, repetitions: 2}", 1)
	p, err := Parse([]byte(auto), "p.yaml", ".")
	if err != nil {
		t.Fatal(err)
	}
	if !p.Sweep.Auto || p.Sweep.AutoLevels != 6 || !slices.Equal(p.Levels(), []int{0}) {
		t.Errorf("sweep = %+v, levels %v; want auto, 6 rates, the synchronous baseline planned", p.Sweep, p.Levels())
	}
	canon := string(p.Canonical())
	if !strings.Contains(canon, `"levels":"auto"`) || !strings.Contains(canon, `"auto_levels":6`) {
		t.Errorf("canonical protocol %s: want levels auto and auto_levels 6", canon)
	}
	again, err := Parse(p.Canonical(), "canonical", ".")
	if err != nil || !again.Sweep.Auto || again.Sweep.AutoLevels != 6 {
		t.Errorf("the canonical form read again: %+v, %v", again, err)
	}
	for in, want := range map[string]string{
		"sweep: {mode: concurrency, levels: auto}":            "p.yaml:7: sweep.levels: auto is only for mode: rate",
		"sweep: {mode: rate, levels: [4], auto_levels: 3}":    "p.yaml:7: sweep.auto_levels: only with levels: auto",
		"sweep: {mode: rate, levels: many}":                   "sweep.levels",
		"sweep: {mode: rate, levels: auto, auto_levels: 0}":   "sweep.auto_levels",
		"sweep: {mode: rate, levels: auto, auto_levels: 500}": "sweep.auto_levels",
	} {
		src := strings.Replace(validProtocol, "sweep: {mode: concurrency, levels: [1, 4], repetitions: 2}", in, 1)
		_, err := Parse([]byte(src), "p.yaml", ".")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error with %q", in, err, want)
		}
	}
}

// TestParseProtocol_ContextSweep: mode context grows the document length at
// a fixed concurrency: its levels are the length classes (levels: classes),
// and the concurrency is required there and refused elsewhere.
func TestParseProtocol_ContextSweep(t *testing.T) {
	ctxSweep := strings.Replace(validProtocol, "sweep: {mode: concurrency, levels: [1, 4], repetitions: 2}",
		"sweep: {mode: context, levels: classes, concurrency: 8}", 1)
	p, err := Parse([]byte(ctxSweep), "p.yaml", ".")
	if err != nil {
		t.Fatal(err)
	}
	if !p.Sweep.Classes || p.Sweep.Concurrency != 8 || !slices.Equal(p.Levels(), []int{1, 2, 3}) {
		t.Errorf("sweep = %+v, levels %v; want the three length classes at concurrency 8", p.Sweep, p.Levels())
	}
	if again, err := Parse(p.Canonical(), "canonical", "."); err != nil || !again.Sweep.Classes {
		t.Errorf("the canonical form %s read again: %v", p.Canonical(), err)
	}
	for in, want := range map[string]string{
		"sweep: {mode: context, levels: classes}":                 "p.yaml:7: sweep.concurrency: a context sweep runs at a fixed concurrency",
		"sweep: {mode: context, levels: [1, 2], concurrency: 4}":  "p.yaml:7: sweep.levels: a context sweep's levels are the corpus's length classes",
		"sweep: {mode: rate, levels: classes}":                    "p.yaml:7: sweep.levels: classes is only for mode: context",
		"sweep: {mode: concurrency, levels: [1], concurrency: 4}": "p.yaml:7: sweep.concurrency: only for mode: context",
	} {
		src := strings.Replace(validProtocol, "sweep: {mode: concurrency, levels: [1, 4], repetitions: 2}", in, 1)
		_, err := Parse([]byte(src), "p.yaml", ".")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error with %q", in, err, want)
		}
	}
}
