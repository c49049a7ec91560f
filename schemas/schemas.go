// Package schemas owns the JSON Schemas extractbench validates against: the
// extraction an engine must answer with, a corpus record, and a protocol
// file. They are embedded in the binary and compiled once.
package schemas

import (
	"embed"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/xeipuuv/gojsonschema"
)

//go:embed *.schema.json
var files embed.FS

// Names of the embedded schema files.
const (
	ExtractionFile   = "extraction.schema.json"
	CorpusRecordFile = "corpus-record.schema.json"
	ProtocolFile     = "protocol.schema.json"
)

var (
	compileOnce sync.Once
	compiled    map[string]*gojsonschema.Schema
	compileErr  error
)

// Extraction returns the compiled default output schema: the three keys
// required, each nullable, no other key.
func Extraction() *gojsonschema.Schema { return mustGet(ExtractionFile) }

// CorpusRecord returns the compiled schema of one documents.jsonl line.
func CorpusRecord() *gojsonschema.Schema { return mustGet(CorpusRecordFile) }

// Protocol returns the compiled schema of a protocol file.
func Protocol() *gojsonschema.Schema { return mustGet(ProtocolFile) }

// Raw returns the text of an embedded schema file, for manifests and fingerprints.
func Raw(name string) []byte {
	b, err := files.ReadFile(name)
	if err != nil {
		panic(fmt.Sprintf("schemas: embedded file %s: %v", name, err))
	}
	return b
}

// mustGet panics when an embedded schema does not compile: that is a bug in
// the binary, caught by the package's tests, never a user error.
func mustGet(name string) *gojsonschema.Schema {
	compileOnce.Do(func() {
		compiled = map[string]*gojsonschema.Schema{}
		for _, n := range []string{ExtractionFile, CorpusRecordFile, ProtocolFile} {
			s, err := gojsonschema.NewSchema(gojsonschema.NewBytesLoader(Raw(n)))
			if err != nil {
				compileErr = fmt.Errorf("compile embedded schema %s: %w", n, err)
				return
			}
			compiled[n] = s
		}
	})
	if compileErr != nil {
		panic(compileErr)
	}
	return compiled[name]
}

// Load compiles a user-supplied schema file (a protocol's output_schema).
func Load(path string) (*gojsonschema.Schema, []byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read schema %s: %w", path, err)
	}
	abs, _ := filepath.Abs(path)
	s, err := gojsonschema.NewSchema(gojsonschema.NewBytesLoader(raw))
	if err != nil {
		return nil, nil, fmt.Errorf("compile schema %s: %w", abs, err)
	}
	return s, raw, nil
}

// Validate checks a decoded JSON value (or raw JSON bytes) against s and
// returns one "field: problem" line per violation, sorted; nil when valid.
func Validate(s *gojsonschema.Schema, doc any) []string {
	var loader gojsonschema.JSONLoader
	switch d := doc.(type) {
	case []byte:
		loader = gojsonschema.NewBytesLoader(d)
	case string:
		loader = gojsonschema.NewStringLoader(d)
	default:
		loader = gojsonschema.NewGoLoader(d)
	}
	return problems(s.Validate(loader))
}

// ValidateDecoded is Validate of a value as encoding/json decodes it with
// UseNumber (map[string]any, []any, json.Number, string, bool, nil), read
// as it is: Validate would encode it to JSON and decode it again, copying
// every string, and a corpus record's text may be tens of megabytes.
func ValidateDecoded(s *gojsonschema.Schema, v any) []string {
	return problems(s.Validate(gojsonschema.NewRawLoader(v)))
}

func problems(res *gojsonschema.Result, err error) []string {
	if err != nil {
		return []string{fmt.Sprintf("(root): not valid JSON: %v", err)}
	}
	if res.Valid() {
		return nil
	}
	out := make([]string, 0, len(res.Errors()))
	for _, e := range res.Errors() {
		field := e.Field()
		if field == "(root)" && e.Type() == "required" {
			if p, ok := e.Details()["property"]; ok {
				field = fmt.Sprint(p)
			}
		}
		out = append(out, field+": "+strings.TrimPrefix(e.Description(), field+" "))
	}
	sort.Strings(out)
	return out
}
