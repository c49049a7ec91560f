package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/pipeline/protocol"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/schemas"
)

// preflight is what Run checks before it takes the directory's lock: a
// new run's protocol, corpus, schema and variants (prepare), a resumed
// run's everything that may refuse it (checkResume). A bad protocol,
// corpus, schema or variant leaves no results directory behind, and a
// refused resume leaves it as it was.
func (rs *runState) preflight(ctx context.Context) error {
	if !rs.opts.Resume {
		return rs.prepare(nil)
	}
	checked, err := rs.checkResume(ctx)
	rs.checked = checked
	return err
}

// prepare loads the protocol (the resumed run's own when resuming without
// -protocol), the corpus and the output schema, and builds the manifest.
// Everything is checked before the first request, and every problem is
// reported at once (ValidationError).
func (rs *runState) prepare(prev *results.Run) error {
	if err := rs.loadProtocol(prev); err != nil {
		return err
	}
	full, schemaSrc, schemaRaw, problems := rs.loadInputs(prev)
	if len(problems) > 0 {
		return &ValidationError{Problems: problems}
	}
	if rs.proto.GuidedDecoding {
		rs.responseFormat = responseFormat(schemaRaw)
	}
	rs.evalOpts = eval.Options{Rule: extractbench.ParseRule(rs.proto.Parse), Schema: rs.schema, Categories: rs.corpus.Manifest.Categories, Fields: rs.proto.Fields}
	m := rs.newManifest(full, extractbench.SchemaInfo{Source: schemaSrc, SHA256: sha256Hex(schemaRaw)})
	if rs.opts.CheckManifest != nil {
		if problems := rs.opts.CheckManifest(m); len(problems) > 0 {
			return &ValidationError{Problems: problems}
		}
	}
	rs.secrets = results.NewSecrets(rs.proto.Secrets()...)
	rs.progress = rs.secrets.Writer(rs.opts.Progress) // a line ends with no part of a secret: nothing is held back
	for _, w := range rs.proto.PlainKeys() {
		rs.logf("warning: %s", w)
	}
	rs.manifest, rs.simulated = m, m.Simulated
	return nil
}

// loadProtocol parses the run's protocol: the resumed run's own (prev,
// when -protocol is not given), Options.ProtocolText, or the file.
func (rs *runState) loadProtocol(prev *results.Run) error {
	var err error
	switch {
	case prev != nil && rs.opts.ProtocolPath == "":
		var m extractbench.Manifest
		if err := json.Unmarshal(prev.Manifest, &m); err != nil {
			return fmt.Errorf("read the manifest of run %s: %w", prev.RunID, err)
		}
		rs.proto, err = protocol.Parse(m.Protocol, m.ProtocolSource+" (from run "+prev.RunID+")", protocol.ManifestDir(&m))
		if err == nil {
			if fields := rs.proto.RemovedCredentials(); len(fields) > 0 {
				return &ConfigError{fmt.Errorf("resume: the protocol of run %s has credentials in %s, which its manifest does not keep: resume with -protocol FILE, the protocol file that has them", prev.RunID, strings.Join(fields, ", "))}
			}
		}
	case rs.opts.ProtocolText != nil:
		wd, _ := os.Getwd()
		rs.proto, err = protocol.Parse(rs.opts.ProtocolText, rs.opts.ProtocolSource, wd)
	default:
		rs.proto, err = protocol.Load(rs.opts.ProtocolPath)
	}
	var pe *protocol.Error
	if errors.As(err, &pe) {
		return &ValidationError{Problems: pe.Problems}
	}
	if err != nil {
		return &ConfigError{err}
	}
	return nil
}

// loadInputs loads the corpus (the shard's part of it) and the output
// schema and checks the variants, tokenizers, levels and, for a new run,
// the results directory. full describes the whole corpus; problems are
// every one found.
func (rs *runState) loadInputs(prev *results.Run) (full extractbench.CorpusInfo, schemaSrc string, schemaRaw []byte, problems []string) {
	var err error
	rs.corpus, err = loadCorpus(rs.proto)
	if err != nil {
		problems = append(problems, problemsOf(err)...)
	}
	rs.printCorpusWarnings()
	if rs.corpus != nil {
		full = extractbench.CorpusInfo{Path: rs.corpus.Path, SHA256: rs.corpus.Manifest.SHA256, Count: rs.corpus.Len(), Classes: classCounts(rs.corpus)}
		if err := rs.selectShard(prev); err != nil {
			problems = append(problems, err.Error())
		}
	}
	schemaSrc, schemaRaw, schemaProblems := rs.loadSchema()
	problems = append(problems, schemaProblems...)
	problems = append(problems, rs.checkVariants()...)
	problems = append(problems, rs.loadTokenizers()...)
	problems = append(problems, rs.checkLevels()...)
	if prev == nil {
		problems = append(problems, checkOutDir(rs.opts.OutDir)...)
	}
	return full, schemaSrc, schemaRaw, problems
}

// schemaFromFields is the manifest's output schema source of a protocol
// whose declared fields generate it (output_schema left at default).
const schemaFromFields = "generated from fields"

// loadSchema sets the run's output schema: the embedded default, the
// protocol's output_schema file, or for a protocol that declares fields
// and no file, the schema generated from them (eval.FieldSchema). A file
// beside declared fields must agree with them. src and raw are what the
// manifest records and guided decoding sends.
func (rs *runState) loadSchema() (src string, raw []byte, problems []string) {
	fields := rs.proto.Fields
	if rs.proto.OutputSchema == "default" {
		if len(fields) == 0 {
			rs.schema = schemas.Extraction()
			return "default", schemas.Raw(schemas.ExtractionFile), nil
		}
		var err error
		if rs.schema, raw, err = eval.CompileFieldSchema(fields); err != nil {
			return schemaFromFields, nil, []string{fmt.Sprintf("%s: %v", rs.proto.At("fields"), err)}
		}
		return schemaFromFields, raw, nil
	}
	path := rs.proto.ResolvePath(rs.proto.OutputSchema)
	var err error
	rs.schema, raw, err = schemas.Load(path)
	if err != nil {
		return path, raw, []string{fmt.Sprintf("%s: %v", rs.proto.At("output_schema"), err)}
	}
	for _, p := range eval.CheckFieldSchema(fields, raw) {
		problems = append(problems, fmt.Sprintf("%s: %s disagrees with fields: %s", rs.proto.At("output_schema"), path, p))
	}
	return path, raw, problems
}

// newManifest is the run's manifest as known before any engine starts:
// what its fingerprint covers.
func (rs *runState) newManifest(full extractbench.CorpusInfo, schema extractbench.SchemaInfo) *extractbench.Manifest {
	m := &extractbench.Manifest{
		Tool:           extractbench.ToolInfo{Name: "extractbench", Version: extractbench.ToolVersion, ScorerVersion: extractbench.ScorerVersion},
		ProtocolName:   rs.proto.Name,
		ProtocolSource: rs.proto.Source,
		Protocol:       rs.proto.Canonical(),
		Corpus:         full, // the whole corpus's, also for a shard: shards of one run share the fingerprint
		Shard:          rs.shard,
		OutputSchema:   schema,
		Prompt:         rs.proto.Prompt,
		Generation:     rs.proto.Generation,
		Parse:          rs.proto.Parse,
		Acceptance:     rs.proto.Acceptance,
		Sweep:          rs.proto.Sweep,
		Cache:          rs.proto.Cache,
		Host:           hostInfo(),
	}
	for _, v := range rs.proto.Variants {
		// Simulated is what an engine says of itself once it is up
		// (engine.pin), not what its URL suggests.
		tokSHA := ""
		if p := rs.prompts[v.Name]; p != nil {
			tokSHA = p.Tokenizer.SHA256
		}
		m.Variants = append(m.Variants, extractbench.VariantManifest{Name: v.Name, Engine: extractbench.EngineInfo{TokenizerSHA256: tokSHA,
			URL: redactURL(v.Engine.URL), Endpoints: replicaNames(v.Engine), Kind: v.Engine.Kind, Model: v.Engine.Model, Revision: v.Engine.Revision,
			Tokenizer: v.Engine.Tokenizer, ChatTemplate: v.Engine.ChatTemplate, ContextWindow: v.Engine.ContextWindow,
			Weights: v.Engine.Weights, Quantization: v.Engine.Quantization, Params: v.Engine.Params,
			Started: v.Engine.Start != "", RandomWeights: v.Engine.RandomWeights}})
	}
	m.Model, m.Engine = m.Variants[0].Engine.Model, m.Variants[0].Engine
	m.Fingerprint = extractbench.Fingerprint(m)
	return m
}

// maxCorpusWarnings is how many of the corpus loader's warnings run prints;
// `extractbench corpus check` lists them all.
const maxCorpusWarnings = 10

// printCorpusWarnings prints what the corpus loader found that does not stop
// a run (no manifest.json, a duplicate text, a class that disagrees with
// the length).
func (rs *runState) printCorpusWarnings() {
	if rs.corpus == nil {
		return // it did not load: its problems are reported
	}
	w := rs.corpus.Warnings
	for _, msg := range w[:min(len(w), maxCorpusWarnings)] {
		rs.logf("corpus: warning: %s", msg)
	}
	if len(w) > maxCorpusWarnings {
		rs.logf("corpus: %d more warnings; extractbench corpus check %s lists them all", len(w)-maxCorpusWarnings, rs.corpus.Path)
	}
}

// loadCorpus loads the protocol's corpus; under declared fields, every
// expected object is checked against them (a corpus that disagrees is a
// LoadError, and nothing is run).
func loadCorpus(p *protocol.Protocol) (*corpus.Corpus, error) {
	exp, declared := p.Expectations()
	loadDefault := func() (*corpus.Corpus, error) {
		if declared {
			return corpus.LoadDefaultFields(exp)
		}
		return corpus.LoadDefault()
	}
	if p.Corpus == "default" {
		return loadDefault()
	}
	path := p.ResolvePath(p.Corpus)
	if _, err := os.Stat(path); err != nil {
		if p.Corpus == "corpus/default" {
			return loadDefault() // the embedded copy of the same files
		}
		return nil, fmt.Errorf("%s: %s does not exist (want a corpus directory, a .jsonl file, or default for the embedded corpus)", p.At("corpus"), path)
	}
	var c *corpus.Corpus
	var err error
	if declared {
		c, err = corpus.OpenFields(path, exp) // held in memory, or by reference when large (Resolve)
	} else {
		c, err = corpus.Open(path)
	}
	var le *corpus.LoadError
	if err != nil && !errors.As(err, &le) {
		return nil, fmt.Errorf("%s: %w", p.At("corpus"), err) // a LoadError names the corpus's own lines
	}
	return c, err
}

// responseFormat wraps the output schema as OpenAI's json_schema response
// format, which vLLM, SGLang and llama.cpp use for guided decoding.
func responseFormat(schema []byte) json.RawMessage {
	b, _ := json.Marshal(map[string]any{
		"type":        "json_schema",
		"json_schema": map[string]any{"name": "extraction", "strict": true, "schema": json.RawMessage(schema)},
	})
	return b
}

func classCounts(c *corpus.Corpus) map[string]int {
	m := map[string]int{}
	for i := range c.Len() {
		m[string(c.Doc(i).LengthClass)]++
	}
	return m
}
