package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// decodeDocument reads the one YAML (or JSON) document of a protocol. A
// second document would be ignored by a plain decode, and with it whatever
// the author meant it to say: it is refused. nil and a problem when there
// is no document, or more than one.
func decodeDocument(raw []byte, source string) (*yaml.Node, []string) {
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	var root yaml.Node
	switch err := dec.Decode(&root); {
	case errors.Is(err, io.EOF):
		return nil, []string{source + ":1: (root): the protocol is empty"}
	case err != nil:
		return nil, []string{fmt.Sprintf("%s: %s", source, yamlErrorText(err))}
	}
	if len(root.Content) == 0 {
		return nil, []string{source + ":1: (root): the protocol is empty"}
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, []string{fmt.Sprintf("%s: %s", source, yamlErrorText(err))}
	case !emptyDocument(&next):
		return nil, []string{fmt.Sprintf("%s:%d: (root): a second YAML document (after ---): a protocol is one document, and the second would be ignored; remove it, or put it in a file of its own", source, next.Line)}
	}
	return root.Content[0], nil
}

// emptyDocument reports whether a YAML document says nothing (a "---"
// that ends the file).
func emptyDocument(n *yaml.Node) bool {
	if len(n.Content) == 0 {
		return true
	}
	c := n.Content[0]
	return c.Kind == yaml.ScalarNode && c.Tag == "!!null" && c.Value == ""
}

// durationRe is the schema's duration pattern: what is checked further.
var durationRe = regexp.MustCompile(`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`)

// durationDefaults are the duration keys a zero would silently replace by
// their default, with that default. interrupt_grace is not among them: it
// is left out of the canonical form when unset.
var durationDefaults = map[string]time.Duration{
	"request_timeout":    DefaultRequestTimeout,
	"telemetry_interval": DefaultTelemetryInterval,
	"ready_timeout":      DefaultReadyTimeout,
}

// durationKey reports whether path (dotted, from the root) is a duration
// of the protocol.
func durationKey(path []string) bool {
	switch len(path) {
	case 1:
		return path[0] == "request_timeout" || path[0] == "telemetry_interval" || path[0] == "interrupt_grace"
	case 4:
		return path[0] == "variants" && path[2] == "engine" && path[3] == "ready_timeout"
	}
	return false
}

// valueProblems finds what the schema cannot see in the values as
// written, each with FILE:LINE: a number that is not finite (NaN cannot
// even be validated), a duration longer than a time.Duration holds, a
// zero duration that would silently mean the default. fatal says the tree
// cannot be validated at all. suspects are the whole numbers too large for
// an integer key, by path without indexes ("variants.engine.params"), for
// a decode error to be located.
func valueProblems(doc *yaml.Node, source string) (problems []string, fatal bool, suspects map[string][]string) {
	w := &valueWalk{source: source, suspects: map[string][]string{}}
	w.walk(doc, nil)
	return w.problems, w.fatal, w.suspects
}

// valueWalk is valueProblems's walk of the tree and what it found.
type valueWalk struct {
	source   string
	problems []string
	fatal    bool
	suspects map[string][]string
}

func (w *valueWalk) walk(n *yaml.Node, path []string) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			w.walk(n.Content[i+1], append(path[:len(path):len(path)], n.Content[i].Value))
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			w.walk(c, append(path[:len(path):len(path)], strconv.Itoa(i)))
		}
	case yaml.ScalarNode:
		at := fmt.Sprintf("%s:%d: %s", w.source, n.Line, strings.Join(path, "."))
		switch n.Tag {
		case "!!float", "!!int":
			w.number(n, path, at)
		case "!!str":
			w.duration(n, path, at)
		}
	}
}

// number refuses a number that is not finite and notes a whole number
// beyond an integer key's range.
func (w *valueWalk) number(n *yaml.Node, path []string, at string) {
	var f float64
	if n.Decode(&f) != nil {
		return
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		w.problems = append(w.problems, fmt.Sprintf("%s: %s is not a number; write a finite number", at, n.Value))
		w.fatal = true
		return
	}
	if f == math.Trunc(f) && (f >= 1<<63 || f < -(1<<63)) {
		key := strings.Join(withoutIndexes(path), ".")
		w.suspects[key] = append(w.suspects[key], fmt.Sprintf("%s: %s is beyond what an integer key can hold (-9223372036854775808 to 9223372036854775807)", at, n.Value))
	}
}

// duration refuses a duration key's value that overflows, or is zero where
// zero would silently mean the default.
func (w *valueWalk) duration(n *yaml.Node, path []string, at string) {
	if !durationKey(path) || !durationRe.MatchString(n.Value) {
		return // the schema says what is wrong with it
	}
	d, err := time.ParseDuration(n.Value)
	key := path[len(path)-1]
	switch {
	case err != nil:
		w.problems = append(w.problems, fmt.Sprintf("%s: %s is longer than a duration can be (at most %s); give a shorter one", at, n.Value, time.Duration(math.MaxInt64)))
	case d == 0 && strings.HasSuffix(key, "_timeout"):
		w.problems = append(w.problems, fmt.Sprintf("%s: %s: no timeout is not allowed; give a duration (leave the key out for the default, %s)", at, n.Value, durationDefaults[key]))
	case d == 0 && durationDefaults[key] != 0:
		w.problems = append(w.problems, fmt.Sprintf("%s: %s is not an interval; give a duration (leave the key out for the default, %s)", at, n.Value, durationDefaults[key]))
	}
}

func withoutIndexes(path []string) []string {
	out := make([]string, 0, len(path))
	for _, p := range path {
		if _, err := strconv.Atoi(p); err != nil {
			out = append(out, p)
		}
	}
	return out
}

// decodeProblems says where a value that passed the schema cannot be
// decoded: a whole number beyond an integer key's range (the schema's
// "integer" admits 1e23), named by the suspects valueProblems found.
func decodeProblems(err error, doc *yaml.Node, source string, suspects map[string][]string) []string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) || te.Field == "" {
		return []string{fmt.Sprintf("%s: %v", source, err)}
	}
	if s := suspects[te.Field]; len(s) > 0 {
		return s
	}
	what := "this key's type"
	if te.Type != nil {
		switch te.Type.Kind() {
		case reflect.Int, reflect.Int64, reflect.Int32:
			what = "an integer"
		}
	}
	return []string{fmt.Sprintf("%s:%d: %s: %s cannot be read as %s", source, lineOf(doc, te.Field), te.Field, strings.TrimPrefix(te.Value, "number "), what)}
}
