package compare

import (
	"fmt"
	"strconv"

	"github.com/extractbench/extractbench"
)

// ManifestDiffs lists what makes a run and a baseline run measure different
// things, so that a nightly regression between them would compare apples
// with oranges: the prompt, the output schema, the parse rule, the
// generation parameters, and per variant both ran, the model, its revision,
// weight precision, engine kind and version and the GPU. A field either side
// leaves empty is not compared (a protocol checked before its run has no
// engine version yet; an older manifest did not record every field). The corpus is not listed: a different corpus is
// refused outright.
func ManifestDiffs(base, cur *extractbench.Manifest) []string {
	var out []string
	diff := func(what, b, c string) {
		if b != "" && c != "" && b != c {
			out = append(out, fmt.Sprintf("%s: baseline %q, now %q", what, short40(b), short40(c)))
		}
	}
	diff("prompt.system", base.Prompt.System, cur.Prompt.System)
	diff("prompt.user", base.Prompt.User, cur.Prompt.User)
	diff("output schema (sha256)", base.OutputSchema.SHA256, cur.OutputSchema.SHA256)
	diff("parse", base.Parse, cur.Parse)
	if base.Generation.MaxTokens != 0 && cur.Generation.MaxTokens != 0 {
		diff("generation.max_tokens", strconv.Itoa(base.Generation.MaxTokens), strconv.Itoa(cur.Generation.MaxTokens))
	}
	diff("generation.temperature", strconv.FormatFloat(base.Generation.Temperature, 'g', -1, 64), strconv.FormatFloat(cur.Generation.Temperature, 'g', -1, 64))
	diff("generation.seed", seedText(base.Generation.Seed), seedText(cur.Generation.Seed))
	diff("cache", base.Cache, cur.Cache) // passes served from what earlier ones cached, or not
	for _, cv := range cur.Variants {
		bv, ok := variantOf(base, cv.Name)
		if !ok {
			continue // a variant the baseline lacks is reported by the regression itself
		}
		at := "variant " + cv.Name + ": "
		diff(at+"model", bv.Engine.Model, cv.Engine.Model)
		diff(at+"revision", bv.Engine.Revision, cv.Engine.Revision)
		diff(at+"weights", bv.Engine.Weights, cv.Engine.Weights)
		diff(at+"engine kind", bv.Engine.Kind, cv.Engine.Kind)
		diff(at+"engine version", bv.Engine.Version, cv.Engine.Version)
		diff(at+"GPU", bv.GPU.Name, cv.GPU.Name)
	}
	return out
}

func variantOf(m *extractbench.Manifest, name string) (extractbench.VariantManifest, bool) {
	for _, v := range m.Variants {
		if v.Name == name {
			return m.Variant(name), true
		}
	}
	return extractbench.VariantManifest{}, false
}

func seedText(s *int) string {
	if s == nil {
		return "" // not recorded: not compared
	}
	return strconv.Itoa(*s)
}

func short40(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return s
}
