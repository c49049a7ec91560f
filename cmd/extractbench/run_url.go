package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/pipeline/client"
)

// urlProtocolName names the protocol `run -url` writes: init's starter
// protocol (the default protocol's settings) with the one engine variant.
const urlProtocolName = "default-url"

// detectTimeout bounds the questions `run -url` asks the engine before the
// run: each call gets its own CallTimeout within it.
const detectTimeout = 30 * time.Second

// urlFlags are run's -url, -model and -api-key-env: the one-line start
// against a running server, without a protocol file.
type urlFlags struct {
	url, model, apiKeyEnv *string
}

func addURLFlags(fs *flag.FlagSet) urlFlags {
	return urlFlags{
		url:       fs.String("url", "", "run the default protocol against the running engine at `URL` (http://host:port; a /v1 suffix is dropped), no protocol file; the engine kind is detected from what it answers"),
		model:     fs.String("model", "", "with -url: the model the engine serves (as its /v1/models lists it); default: the one it lists"),
		apiKeyEnv: fs.String("api-key-env", "", "with -url: the environment variable that holds the engine's API key (sent as a Bearer token)"),
	}
}

// apply turns -url and -model into opts' protocol: init's starter protocol
// for that engine, with the kind the engine's answers name. It asks the
// engine before anything is created: a URL nothing answers on is an
// infrastructure error (exit 3), and leaves nothing behind.
func (u urlFlags) apply(ctx context.Context, fs *flag.FlagSet, opts *pipeline.Options, stderr io.Writer) error {
	switch {
	case *u.url == "" && (*u.model != "" || *u.apiKeyEnv != ""):
		return &usageError{msg: "run: -model and -api-key-env go with -url: extractbench run -url http://127.0.0.1:8000 -model NAME (or give a -protocol file)"}
	case *u.url == "":
		return nil
	case flagSet(fs, "protocol"):
		return &usageError{msg: "run: give -url or -protocol, not both (-url runs the default protocol; put the engine in the protocol file's variants instead)"}
	case opts.Resume:
		return &usageError{msg: "run: -resume completes a run with its own protocol: drop -url"}
	}
	// Checked before the engine is asked anything.
	if err := checkEngineURL("run", *u.url); err != nil {
		return err
	}
	base := engineBase(*u.url, stderr)
	var key string
	if *u.apiKeyEnv != "" {
		key = os.Getenv(*u.apiKeyEnv)
		if key == "" {
			return &usageError{msg: fmt.Sprintf("run: -api-key-env %s: the variable is not set", *u.apiKeyEnv)}
		}
		if why := pipeline.KeyProblem(*u.apiKeyEnv, key); why != "" {
			return &usageError{msg: "run: -api-key-env: " + why}
		}
	}
	dctx, cancel := context.WithTimeout(ctx, detectTimeout)
	defer cancel()
	unreachable := func(err error) error {
		return fmt.Errorf("run: the engine at %s: %w (is it running, and does it want a key (-api-key-env VAR)? check with: curl %s/v1/models)", base, err, base)
	}
	if *u.model == "" {
		models, err := client.New(client.Config{BaseURL: base, APIKey: key}).Models(dctx)
		if err != nil {
			return unreachable(err)
		}
		model, err := onlyModel(base, models)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "engine at %s serves one model, %q: running it (-model names another)\n", base, model)
		*u.model = model
	}
	d, err := client.New(client.Config{BaseURL: base, Model: *u.model, APIKey: key}).DetectKind(dctx)
	if err != nil {
		return unreachable(err)
	}
	kind := "not detected, engine.kind left empty"
	if d.Kind != "" {
		kind = d.Kind
	}
	fmt.Fprintf(stderr, "engine at %s: %s (%s); running the default protocol on model %q. To edit it: extractbench init -url %s -model %s\n",
		base, kind, d.Evidence, *u.model, base, *u.model)
	var more []string
	if d.Kind != "" {
		more = append(more, fmt.Sprintf("kind: %q", d.Kind))
	}
	if *u.apiKeyEnv != "" {
		more = append(more, fmt.Sprintf("api_key_env: %q", *u.apiKeyEnv))
	}
	text, err := starterProtocol("run", base, *u.model, more...)
	if err != nil {
		return err
	}
	text = strings.Replace(text, "#name: <this file's name>", "name: "+urlProtocolName, 1)
	opts.ProtocolText, opts.ProtocolSource = []byte(text), fmt.Sprintf("(run -url %s -model %s)", base, *u.model)
	return nil
}

// engineBase is -url as the client wants it: no trailing slash and no /v1,
// which the client adds to every path (http://host/v1 would ask
// /v1/v1/models). Dropping /v1 is said on stderr.
func engineBase(url string, stderr io.Writer) string {
	base := strings.TrimSuffix(url, "/")
	if b, ok := strings.CutSuffix(base, "/v1"); ok {
		fmt.Fprintf(stderr, "-url %s: dropped the /v1 suffix (extractbench adds /v1/... to each request): using %s\n", url, b)
		base = b
	}
	return base
}

// onlyModel is the model an engine that lists exactly one serves; with
// none or several it is a usage error (exit 2) that lists them.
func onlyModel(base string, models []string) (string, error) {
	switch len(models) {
	case 1:
		return models[0], nil
	case 0:
		return "", &usageError{msg: fmt.Sprintf("run: the engine at %s lists no model in /v1/models: give -model NAME", base)}
	}
	return "", &usageError{msg: fmt.Sprintf("run: the engine at %s serves %d models (%s): choose one with -model NAME", base, len(models), strings.Join(models, ", "))}
}
