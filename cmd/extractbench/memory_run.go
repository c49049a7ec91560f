package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/sizing"
)

// runModel is the -model that sizes the run's model, read from its
// manifest: a preset of the served model's name, else the config.json
// beside the tokenizer.json the run counted prompts with. A run that names
// neither is refused with the flag to pass: sizing another model (the
// default preset) beside its peaks would compare nothing.
func runModel(run *results.RunData) (string, error) {
	m := &run.Manifest
	engines := []extractbench.EngineInfo{m.Engine} // a manifest without variants: the run's one engine
	if len(m.Variants) > 0 {
		engines = engines[:0]
		for _, v := range m.Variants {
			engines = append(engines, v.Engine)
		}
	}
	var names []string
	for _, e := range engines {
		if e.Model != "" && !slices.Contains(names, e.Model) {
			names = append(names, e.Model)
		}
	}
	switch {
	case len(names) == 0:
		return "", fmt.Errorf("run %s in %s names no model: pass -model (a preset, a config.json, a model directory or a GGUF file)", run.Run.RunID, run.Dir)
	case len(names) > 1:
		return "", fmt.Errorf("the variants of run %s in %s serve different models (%s): pass -model with the one to size", run.Run.RunID, run.Dir, strings.Join(names, ", "))
	}
	if _, ok := sizing.Preset(names[0]); ok {
		return names[0], nil
	}
	var tried []string
	for _, e := range engines {
		if p := configBeside(m, e); p != "" && !slices.Contains(tried, p) {
			if _, err := os.Stat(p); err == nil {
				return p, nil
			}
			tried = append(tried, p)
		}
	}
	where := "its manifest names no tokenizer.json"
	if len(tried) > 0 {
		where = "no " + strings.Join(tried, " or ")
	}
	params := ""
	if p := engines[0].Params; p > 0 {
		params = fmt.Sprintf(" (%d parameters)", p)
	}
	return "", fmt.Errorf("run %s in %s served %s%s, whose shape the calculator does not know: no preset of that name, and %s; pass -model with its config.json, model directory or GGUF file",
		run.Run.RunID, run.Dir, names[0], params, where)
}

// configBeside is the config.json beside the tokenizer.json e names,
// resolved as the run resolved it (against its protocol's directory); ""
// when e names none.
func configBeside(m *extractbench.Manifest, e extractbench.EngineInfo) string {
	if !strings.HasSuffix(e.Tokenizer, ".json") {
		return ""
	}
	tok := e.Tokenizer
	if !filepath.IsAbs(tok) && m.ProtocolSource != "" && !strings.HasPrefix(m.ProtocolSource, "(") {
		tok = filepath.Join(filepath.Dir(m.ProtocolSource), tok)
	}
	return filepath.Join(filepath.Dir(tok), "config.json")
}
