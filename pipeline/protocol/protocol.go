// Package protocol reads a protocol file: it validates it against
// schemas/protocol.schema.json and what the schema cannot say, names the
// file, line and field of every problem at once, fills the named defaults
// (a minimal protocol takes the embedded default's keys) and keeps its
// canonical form, credentials removed, for the manifest and fingerprint.
package protocol

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/pipeline/client"
	"github.com/extractbench/extractbench/pipeline/family"
	"github.com/extractbench/extractbench/schemas"
)

// DefaultYAML is the protocol used when none is given.
//
//go:embed default-protocol.yaml
var DefaultYAML []byte

// Named defaults for keys a protocol may leave out.
const (
	DefaultRepetitions       = 3                      // each level is measured this many times
	DefaultWarmup            = 8                      // warm-up requests per variant, excluded from every figure
	DefaultRequestTimeout    = client.DefaultTimeout  // per request, from send to the last byte
	DefaultReadyTimeout      = 600 * time.Second      // engine start until /health answers
	DefaultTelemetryInterval = 100 * time.Millisecond // /metrics and nvidia-smi sampling
	DefaultOnMemoryFailure   = "retry_lower"
	// DefaultOrder is how a pass orders its documents (sweep.order): a
	// seeded random order, since corpus order correlates with length.
	DefaultOrder = extractbench.OrderShuffle
	// DefaultInterruptGrace is how long the first SIGINT/SIGTERM lets the
	// requests in flight finish before they are cancelled and recorded as
	// interrupted (protocol key interrupt_grace). Short, so that Ctrl-C
	// answers within seconds; long enough for a usual request to end.
	DefaultInterruptGrace = 10 * time.Second
	// DefaultCache empties the engine's prompt cache before every measured
	// pass, so that no pass is served documents an earlier one left there
	// (MEASUREMENT.md, "Caches between passes").
	DefaultCache = CacheReset
)

// The values of the protocol key cache.
const (
	CacheReset = "reset" // ask the engine to empty its prompt cache before each pass
	CacheKeep  = "keep"  // leave it: passes may be served what earlier ones cached
)

// Protocol is a parsed, validated protocol file. Field names follow the file's keys.
type Protocol struct {
	Name           string              `json:"name"`
	Description    string              `json:"description,omitempty"`
	Corpus         string              `json:"corpus"`
	Prompt         extractbench.Prompt `json:"prompt"`
	OutputSchema   string              `json:"output_schema"`
	GuidedDecoding bool                `json:"guided_decoding"`
	Parse          string              `json:"parse"`
	// Fields are the fields the answer is judged on, each with its rule;
	// none means the default fields (extractbench.DefaultFieldNames).
	// Left out of the canonical form when unset, so that the default
	// protocol's fingerprint does not change.
	Fields            []extractbench.Field    `json:"fields,omitempty"`
	Generation        extractbench.Generation `json:"generation"`
	Acceptance        extractbench.Acceptance `json:"acceptance"`
	Sweep             extractbench.Sweep      `json:"sweep"`
	RequestTimeout    extractbench.Duration   `json:"request_timeout"`
	TelemetryInterval extractbench.Duration   `json:"telemetry_interval"`
	// InterruptGrace is left out of the canonical form when unset, so that
	// the fingerprints of protocols written before it do not change.
	InterruptGrace extractbench.Duration `json:"interrupt_grace,omitempty"`
	// MaxAnswerBytes caps one answer's content (max_answer_bytes): past it
	// the client cancels the request, recorded as too_large (truncation).
	// Zero: client.MaxAnswerBytes of generation.max_tokens. Left out of the
	// canonical form when unset, as InterruptGrace is.
	MaxAnswerBytes int `json:"max_answer_bytes,omitempty"`
	// Cache is what becomes of the engine's prompt cache before each
	// measured pass: CacheReset (DefaultCache) or CacheKeep. Always in the
	// canonical form: a run that reset and one that kept measured different
	// things, so their fingerprints differ.
	Cache    string                 `json:"cache"`
	Variants []extractbench.Variant `json:"variants"`

	// Source is where the protocol came from ("(embedded default)" or a path);
	// Dir is the directory relative paths in it are resolved against.
	Source string     `json:"-"`
	Dir    string     `json:"-"`
	doc    *yaml.Node // the parsed file, for At
}

// Error is a protocol that cannot be used; each problem names the
// file, line and field.
type Error struct {
	Problems []string
}

// ExitCode is the status the command line exits with on a protocol that
// cannot be used: 2, a usage or configuration error.
func (e *Error) ExitCode() int { return 2 }

func (e *Error) Error() string {
	if len(e.Problems) == 1 {
		return e.Problems[0]
	}
	return fmt.Sprintf("%d problems:\n  %s", len(e.Problems), strings.Join(e.Problems, "\n  "))
}

// Load reads, validates and decodes a protocol file (YAML or JSON).
// An empty path gives the embedded default.
func Load(path string) (*Protocol, error) {
	if path == "" {
		wd, _ := os.Getwd()
		return Parse(DefaultYAML, "(embedded default)", wd)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{Problems: []string{fmt.Sprintf("%s: cannot read protocol: %v", path, err)}}
	}
	return Parse(raw, path, filepath.Dir(path))
}

// Parse validates raw (YAML or JSON) against schemas/protocol.schema.json,
// rejecting unknown keys and bad values with source:line: field: problem,
// then fills defaults.
func Parse(raw []byte, source, dir string) (*Protocol, error) {
	doc, docProbs := decodeDocument(raw, source)
	if doc == nil {
		return nil, &Error{Problems: docProbs}
	}
	var generic any
	if err := doc.Decode(&generic); err != nil {
		return nil, &Error{Problems: []string{fmt.Sprintf("%s: %s", source, yamlErrorText(err))}}
	}
	valueProbs, fatal, suspects := valueProblems(doc, source)
	if fatal { // a NaN cannot even be validated
		sort.SliceStable(valueProbs, func(i, j int) bool { return lineNumber(valueProbs[i]) < lineNumber(valueProbs[j]) })
		return nil, &Error{Problems: valueProbs}
	}
	generic = normaliseYAML(generic)
	fillMinimal(generic, source)
	if problems := schemas.Validate(schemas.Protocol(), generic); len(problems) > 0 || len(valueProbs) > 0 {
		out := append(make([]string, 0, len(problems)+len(valueProbs)), valueProbs...)
		for _, p := range problems {
			field, msg, _ := strings.Cut(p, ": ")
			var key string
			if _, err := fmt.Sscanf(msg, "Additional property %s is not allowed", &key); err == nil {
				if field != "(root)" {
					key = field + "." + key
				}
				field, msg = key, "unknown key (see schemas/protocol.schema.json for the allowed keys)"
			}
			out = append(out, fmt.Sprintf("%s:%d: %s: %s", source, lineOf(doc, field), field, msg))
		}
		// What the schema cannot say is checked too when the file decodes,
		// so that every problem is listed at once.
		if js, err := json.Marshal(generic); err == nil {
			var p Protocol
			if json.Unmarshal(js, &p) == nil {
				p.Source = source
				var pe *Error
				if errors.As(p.check(doc), &pe) {
					out = append(out, pe.Problems...)
				}
			}
		}
		sort.SliceStable(out, func(i, j int) bool { return lineNumber(out[i]) < lineNumber(out[j]) })
		return nil, &Error{Problems: out}
	}
	js, err := json.Marshal(generic)
	if err != nil {
		return nil, fmt.Errorf("re-encode protocol %s: %w", source, err)
	}
	var p Protocol
	if err := json.Unmarshal(js, &p); err != nil {
		return nil, &Error{Problems: decodeProblems(err, doc, source, suspects)}
	}
	p.Source, p.Dir, p.doc = source, dir, doc
	if err := p.check(doc); err != nil {
		return nil, err
	}
	p.fillDefaults()
	return &p, nil
}

// check enforces what the schema cannot say.
func (p *Protocol) check(doc *yaml.Node) error {
	problems := append(p.checkVariants(doc), p.checkSweep(doc)...)
	problems = append(problems, p.checkFields(doc)...)
	if len(problems) > 0 {
		sort.SliceStable(problems, func(i, j int) bool { return lineNumber(problems[i]) < lineNumber(problems[j]) })
		return &Error{Problems: problems}
	}
	return nil
}

// checkVariants refuses two variants of one name, engine URLs that do not
// fit together, and a baseline variant that is not one of them.
func (p *Protocol) checkVariants(doc *yaml.Node) []string {
	var problems []string
	seen := map[string]bool{}
	for i, v := range p.Variants {
		if seen[v.Name] {
			problems = append(problems, fmt.Sprintf("%s:%d: variants.%d.name: duplicate variant name %q", p.Source, lineOf(doc, fmt.Sprintf("variants.%d.name", i)), i, v.Name))
		}
		seen[v.Name] = true
		problems = append(problems, p.checkEngineURLs(doc, i, v.Engine)...)
	}
	if b := p.Acceptance.BaselineVariant; b != "" && !seen[b] {
		problems = append(problems, fmt.Sprintf("%s:%d: acceptance.baseline_variant: no variant is named %q (the variants: %s)", p.Source, lineOf(doc, "acceptance.baseline_variant"), b, variantNames(p.Variants)))
	}
	return problems
}

// checkSweep refuses sweep keys that do not belong to its mode, or that
// its mode needs and lacks.
func (p *Protocol) checkSweep(doc *yaml.Node) []string {
	var problems []string
	sw := p.Sweep
	if sw.Mode != extractbench.ModeRate {
		for key, set := range map[string]bool{"arrival": sw.Arrival != "", "burstiness": sw.Burstiness != 0, "max_in_flight": sw.MaxInFlight != 0} {
			if set {
				problems = append(problems, fmt.Sprintf("%s:%d: sweep.%s: only for mode: rate (this sweep's mode is %s)", p.Source, lineOf(doc, "sweep."+key), key, sw.Mode))
			}
		}
	}
	if sw.Auto && sw.Mode != extractbench.ModeRate {
		problems = append(problems, fmt.Sprintf("%s:%d: sweep.levels: auto is only for mode: rate (this sweep's mode is %s; list its levels)", p.Source, lineOf(doc, "sweep.levels"), sw.Mode))
	}
	if sw.Classes && sw.Mode != extractbench.ModeContext {
		problems = append(problems, fmt.Sprintf("%s:%d: sweep.levels: classes is only for mode: context (this sweep's mode is %s; list its levels)", p.Source, lineOf(doc, "sweep.levels"), sw.Mode))
	}
	if sw.Mode == extractbench.ModeContext && !sw.Classes {
		problems = append(problems, fmt.Sprintf("%s:%d: sweep.levels: a context sweep's levels are the corpus's length classes: write levels: classes", p.Source, lineOf(doc, "sweep.levels")))
	}
	if sw.Mode == extractbench.ModeContext && sw.Concurrency == 0 {
		problems = append(problems, fmt.Sprintf("%s:%d: sweep.concurrency: a context sweep runs at a fixed concurrency: set it (requests in flight, e.g. 8)", p.Source, lineOf(doc, "sweep")))
	}
	if sw.Mode != extractbench.ModeContext && sw.Concurrency != 0 {
		problems = append(problems, fmt.Sprintf("%s:%d: sweep.concurrency: only for mode: context (this sweep's mode is %s; its levels are what it grows)", p.Source, lineOf(doc, "sweep.concurrency"), sw.Mode))
	}
	if sw.AutoLevels != 0 && !sw.Auto {
		problems = append(problems, fmt.Sprintf("%s:%d: sweep.auto_levels: only with levels: auto", p.Source, lineOf(doc, "sweep.auto_levels")))
	}
	if sw.Arrival == extractbench.ArrivalConstant && sw.Burstiness != 0 && sw.Burstiness != 1 {
		problems = append(problems, fmt.Sprintf("%s:%d: sweep.burstiness: shapes Poisson gaps; constant arrivals have none (remove it, or use arrival: poisson)", p.Source, lineOf(doc, "sweep.burstiness")))
	}
	return problems
}

func variantNames(vs []extractbench.Variant) string {
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = v.Name
	}
	return strings.Join(names, ", ")
}

func (p *Protocol) fillDefaults() {
	if p.OutputSchema == "" {
		p.OutputSchema = "default"
	}
	if p.Parse == "" {
		p.Parse = "strict"
	}
	if p.Sweep.Repetitions == 0 {
		p.Sweep.Repetitions = DefaultRepetitions
	}
	if p.Sweep.Mode == extractbench.ModeRate && p.Sweep.Arrival == "" {
		p.Sweep.Arrival = extractbench.ArrivalPoisson
	}
	if p.Sweep.Auto && p.Sweep.AutoLevels == 0 {
		p.Sweep.AutoLevels = extractbench.DefaultAutoLevels
	}
	if p.Sweep.OnMemoryFailure == "" {
		p.Sweep.OnMemoryFailure = DefaultOnMemoryFailure
	}
	if p.Sweep.Order == "" {
		p.Sweep.Order = DefaultOrder
	}
	if p.Acceptance.MinBaselineRatio == 0 {
		p.Acceptance.MinBaselineRatio = extractbench.DefaultMinBaselineRatio
	}
	if p.RequestTimeout == 0 {
		p.RequestTimeout = extractbench.Duration(DefaultRequestTimeout)
	}
	if p.TelemetryInterval == 0 {
		p.TelemetryInterval = extractbench.Duration(DefaultTelemetryInterval)
	}
	if p.Cache == "" {
		p.Cache = DefaultCache
	}
	for i := range p.Variants {
		e := &p.Variants[i].Engine
		if e.ReadyTimeout == 0 {
			e.ReadyTimeout = extractbench.Duration(DefaultReadyTimeout)
		}
		if e.Kind == "" && e.IsBuiltin() {
			e.Kind = family.Builtin.Kind
		}
	}
}

// At names a field of the protocol for a problem message:
// "FILE:LINE: field" (the line of the field, or of its nearest parent
// written in the file).
func (p *Protocol) At(field string) string {
	if p.doc == nil {
		return p.Source + ": " + field
	}
	return fmt.Sprintf("%s:%d: %s", p.Source, lineOf(p.doc, field), field)
}

// Levels returns the pass plan's levels in order, the baseline first and
// exactly once: level 1 (one request at a time), or in rate mode the
// synchronous pass (extractbench.SyncLevel).
func (p *Protocol) Levels() []int { return p.Sweep.PlannedLevels() }

// Grace is how long an interrupted run waits for its in-flight requests
// before it cancels them (interrupt_grace, default DefaultInterruptGrace).
func (p *Protocol) Grace() time.Duration {
	if p.InterruptGrace > 0 {
		return time.Duration(p.InterruptGrace)
	}
	return DefaultInterruptGrace
}

// ResolvePath resolves a path written in the protocol against its directory.
func (p *Protocol) ResolvePath(path string) string {
	if filepath.IsAbs(path) || p.Dir == "" {
		return path
	}
	return filepath.Join(p.Dir, path)
}

// ManifestDir is where the protocol a run's manifest records resolves its
// relative paths when it is parsed again (a resumed run, a merge): the
// protocol file's directory, or the working directory for the embedded
// default and other protocols that came from no file.
func ManifestDir(m *extractbench.Manifest) string {
	if m.ProtocolSource == "(embedded default)" || m.ProtocolSource == "" || strings.HasPrefix(m.ProtocolSource, "(") {
		wd, _ := os.Getwd()
		return wd
	}
	return filepath.Dir(m.ProtocolSource)
}

// IsTokenizerFile reports whether an engine.tokenizer value names a
// tokenizer.json file rather than the tokenizer's name.
func IsTokenizerFile(s string) bool { return strings.HasSuffix(s, ".json") }

// Canonical is the protocol as stored in the run manifest: JSON with
// defaults filled, and the credentials of its URLs replaced by a marker
// (the manifest never keeps a secret).
func (p *Protocol) Canonical() json.RawMessage {
	c := *p
	c.Variants = make([]extractbench.Variant, len(p.Variants))
	for i, v := range p.Variants {
		v.Engine = withoutCredentials(v.Engine)
		c.Variants[i] = v
	}
	b, err := json.Marshal(&c)
	if err != nil {
		panic(fmt.Sprintf("marshal protocol: %v", err)) // only plain types: cannot fail
	}
	return b
}

// normaliseYAML turns yaml.v3's map[string]any trees into the JSON types the
// schema validator expects (ints stay ints; everything else is already JSON-like).
func normaliseYAML(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = normaliseYAML(x)
		}
		return t
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[fmt.Sprint(k)] = normaliseYAML(x)
		}
		return m
	case []any:
		for i, x := range t {
			t[i] = normaliseYAML(x)
		}
		return t
	default:
		return v
	}
}

// lineOf finds the line of a dotted schema path ("sweep.levels.2") in the
// YAML tree; it falls back to the deepest node found.
func lineOf(doc *yaml.Node, field string) int {
	n := doc
	if field == "" || field == "(root)" {
		return n.Line
	}
	for _, part := range strings.Split(field, ".") {
		next := childNode(n, part)
		if next == nil {
			break
		}
		n = next
	}
	return n.Line
}

func childNode(n *yaml.Node, key string) *yaml.Node {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				if n.Content[i+1].Kind == yaml.ScalarNode {
					return n.Content[i+1]
				}
				v := *n.Content[i+1]
				v.Line = n.Content[i].Line // a block value starts on its key's line
				return &v
			}
		}
	case yaml.SequenceNode:
		if i, err := strconv.Atoi(key); err == nil && i >= 0 && i < len(n.Content) {
			return n.Content[i]
		}
	}
	return nil
}

// lineNumber reads N back from "source:N: ..." for sorting.
func lineNumber(problem string) int {
	parts := strings.SplitN(problem, ":", 3)
	if len(parts) < 3 {
		return 0
	}
	n, _ := strconv.Atoi(parts[1])
	return n
}

func yamlErrorText(err error) string {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		return strings.Join(te.Errors, "; ")
	}
	// yaml.v3 says "yaml: line 3: did not find expected key"; keep it as is.
	return err.Error()
}
