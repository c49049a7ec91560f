package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/engines/builtin/starter"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/results"
)

// fieldsEngine is a local engine that streams, for each purchase order
// it is asked about (by the order number in the prompt), the answer in
// answers, and keeps the response_format of every request.
func fieldsEngine(t *testing.T, answers map[string]string) (*httptest.Server, func() []json.RawMessage) {
	t.Helper()
	var mu sync.Mutex
	var formats []json.RawMessage
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model","max_model_len":8192}]}`)
	})
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages       []struct{ Content string } `json:"messages"`
			ResponseFormat json.RawMessage            `json:"response_format"`
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		formats = append(formats, req.ResponseFormat)
		mu.Unlock()
		answer := "{}"
		for order, a := range answers {
			if strings.Contains(req.Messages[len(req.Messages)-1].Content, order) {
				answer = a
			}
		}
		w.Header().Set("Content-Type", "text/event-stream")
		// Two chunks, so that the answer is assembled from a stream.
		half := len(answer) / 2
		for _, part := range []string{answer[:half], answer[half:]} {
			content, _ := json.Marshal(part)
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%s},\"finish_reason\":null}]}\n\n", content)
		}
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, func() []json.RawMessage {
		mu.Lock()
		defer mu.Unlock()
		return append([]json.RawMessage(nil), formats...)
	}
}

// TestRun_DeclaredFields: a protocol that declares its fields runs end to
// end: every request is sent the schema generated from the fields as its
// response_format, each answer is judged on the declared fields (a wrong
// field is a quality failure that names it, a wrong type a format
// failure), and the manifest records the generated schema. The old code
// judged the answers on date, amount and category and sent the default
// schema.
func TestRun_DeclaredFields(t *testing.T) {
	dir := t.TempDir()
	docs := filepath.Join(dir, "po.jsonl")
	lines := []string{
		`{"id":"po-1","text":"Pedido A-1 de ACME, NIF PT-501, total 1.234,50, assinado","length_class":"short","expected":{"order":"A-1","tax_id":"PT-501","total":"1.234,50","signed":true,"lines":["x","y"]}}`,
		`{"id":"po-2","text":"Pedido A-2 de ACME, total 12,50","length_class":"short","expected":{"order":"A-2","tax_id":null,"total":"12,50","signed":false,"lines":[]}}`,
		`{"id":"po-3","text":"Pedido A-3","length_class":"short","expected":{"order":"A-3","tax_id":null,"total":null,"signed":false,"lines":["z"]}}`,
	}
	if err := os.WriteFile(docs, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, formats := fieldsEngine(t, map[string]string{
		"A-1": `{"order":"A-1","supplier":{"tax_id":" pt-501 "},"total":"1.234,50","signed":true,"lines":["y","x"]}`,
		"A-2": `{"order":"A-2","supplier":{"tax_id":null},"total":12.4,"signed":true,"lines":[]}`,
		"A-3": `{"order":"A-3","supplier":{"tax_id":null},"total":null,"signed":"no","lines":["z"]}`,
	})
	p := fmt.Sprintf(`name: po
corpus: %s
fields:
  - {name: order, type: string, description: the order number}
  - {name: tax_id, pointer: /supplier/tax_id, type: string, match: normalised}
  - {name: total, type: decimal, locale: pt}
  - {name: signed, type: boolean, required: true}
  - {name: lines, type: list, items: {type: string}}
guided_decoding: true
prompt: {user: "Extract the order.\n\n{{document}}"}
generation: {max_tokens: 64, temperature: 0}
acceptance: {min_accepted: 0}
sweep: {mode: concurrency, levels: [1], repetitions: 1, warmup: 0}
variants:
  - name: v
    engine: {url: %q, model: m}
`, docs, srv.URL)
	proto := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(proto, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	sum, err := pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(), ProtocolPath: proto, OutDir: out, Quiet: true})
	if err != nil {
		t.Fatal(err)
	}

	sent := formats()
	if len(sent) != len(lines) {
		t.Fatalf("%d requests, want %d", len(sent), len(lines))
	}
	for _, f := range sent {
		var rf struct {
			JSONSchema struct {
				Schema struct {
					Required   []string                   `json:"required"`
					Properties map[string]json.RawMessage `json:"properties"`
				} `json:"schema"`
			} `json:"json_schema"`
		}
		if err := json.Unmarshal(f, &rf); err != nil {
			t.Fatal(err)
		}
		s := rf.JSONSchema.Schema
		if got := strings.Join(s.Required, ","); got != "order,supplier,total,signed,lines" || !strings.Contains(string(s.Properties["supplier"]), "tax_id") ||
			!strings.Contains(string(s.Properties["order"]), "the order number") {
			t.Fatalf("response_format %s: want the schema generated from the fields", f)
		}
	}

	rd, err := results.OpenReadOnly(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	recs, err := rd.Requests(context.Background(), sum.RunID, results.RequestFilter{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		failure extractbench.Failure
		detail  string
	}{
		"po-1": {extractbench.None, ""},
		"po-2": {extractbench.Quality, "total: got 12.4, want 12.5; signed: got true, want false"},
		"po-3": {extractbench.Format, `signed: a string "no", want true or false`},
	}
	if len(recs) != len(want) {
		t.Fatalf("%d records, want %d", len(recs), len(want))
	}
	for _, r := range recs {
		w := want[r.DocID]
		if r.Failure != w.failure || !strings.Contains(r.FailureDetail, w.detail) || r.Accepted != (w.failure == extractbench.None) {
			t.Errorf("%s: failure %q (%s), accepted %v; want %q with %q", r.DocID, r.Failure, r.FailureDetail, r.Accepted, w.failure, w.detail)
		}
	}

	run, err := rd.LatestRun(context.Background())
	if err != nil || run == nil {
		t.Fatalf("latest run: %v", err)
	}
	var m extractbench.Manifest
	if err := json.Unmarshal(run.Manifest, &m); err != nil {
		t.Fatal(err)
	}
	if m.OutputSchema.Source != "generated from fields" || m.OutputSchema.SHA256 == "" {
		t.Errorf("manifest output schema %+v, want the generated one", m.OutputSchema)
	}
}

// TestRun_OutputSchemaDisagreesWithFields: an output_schema file beside
// declared fields that does not describe them is refused before anything
// runs, naming the protocol's line and the field.
func TestRun_OutputSchemaDisagreesWithFields(t *testing.T) {
	dir := t.TempDir()
	docs := filepath.Join(dir, "po.jsonl")
	if err := os.WriteFile(docs, []byte(`{"id":"po-1","text":"Pedido A-1","length_class":"short","expected":{"order":"A-1","total":"1,5"}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	schema := filepath.Join(dir, "s.json")
	if err := os.WriteFile(schema, []byte(`{"type":"object","properties":{"order":{"type":"integer"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	p := fmt.Sprintf(`name: po
corpus: %s
output_schema: %s
fields:
  - {name: order, type: string}
  - {name: total, type: decimal, locale: pt}
prompt: {user: "Extract.\n\n{{document}}"}
generation: {max_tokens: 64}
acceptance: {min_accepted: 0}
sweep: {mode: concurrency, levels: [1], repetitions: 1, warmup: 0}
variants:
  - name: v
    engine: {url: builtin, model: sim-8b, builtin: {time_scale: 0}}
`, docs, schema)
	proto := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(proto, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	_, err := pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(), ProtocolPath: proto, OutDir: out, Quiet: true})
	for _, w := range []string{
		proto + ":3: output_schema: " + schema + " disagrees with fields: field order (/order): the schema's type integer does not hold a string",
		`field total (/total): the schema has no property "total" at /`,
	} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("err = %v, want it to say %q", err, w)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("results directory %s exists after a refused run (%v)", out, err)
	}
}
