package builtin

import (
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/extractbench/extractbench/corpus/generate/purchaseorders"
	"golang.org/x/text/unicode/norm"
)

// poSchema is the output schema of the purchase-order example's fields
// (examples/purchase-orders/protocol.yaml) as eval.FieldSchema generates
// it: keys sorted, the supplier nested, the lines a list, dates a pattern.
const poSchema = `{"$schema":"http://json-schema.org/draft-07/schema#","additionalProperties":false,
"properties":{
 "currency":{"enum":["BRL","EUR","USD"],"type":"string"},
 "delivery_date":{"pattern":"^([0-9]{4}-[0-9]{2}-[0-9]{2})$","type":["string","null"]},
 "lines":{"items":{"type":"string"},"type":["array","null"]},
 "order_date":{"pattern":"^([0-9]{4}-[0-9]{2}-[0-9]{2})$","type":["string","null"]},
 "order_number":{"type":["string","null"]},
 "signed":{"type":["boolean","null"]},
 "supplier":{"additionalProperties":false,"properties":{"name":{"type":["string","null"]},"tax_id":{"type":["string","null"]}},"required":["name","tax_id"],"type":"object"},
 "total":{"type":["number","string","null"]}},
"required":["order_number","supplier","lines","currency","total","order_date","delivery_date","signed"],
"title":"Extraction","type":"object"}`

// poPointers are where each expected field is in the answer.
var poPointers = map[string][]string{
	"order_number": {"order_number"}, "supplier_name": {"supplier", "name"}, "supplier_tax_id": {"supplier", "tax_id"},
	"lines": {"lines"}, "currency": {"currency"}, "total": {"total"}, "order_date": {"order_date"},
	"delivery_date": {"delivery_date"}, "signed": {"signed"},
}

func poFormat() json.RawMessage {
	return json.RawMessage(`{"type":"json_schema","json_schema":{"name":"extraction","strict":true,"schema":` + poSchema + `}}`)
}

// poWrong returns the fields of answer that do not match the document's
// expectations, judged as the example protocol's rules say (the supplier's
// name normalised, the total within half a cent, the lines as a set), or
// "invalid" when the answer is no JSON object.
func poWrong(answer, expected string) []string {
	var got, want map[string]any
	if json.Unmarshal([]byte(answer), &got) != nil || json.Unmarshal([]byte(expected), &want) != nil {
		return []string{"invalid"}
	}
	var wrong []string
	for _, name := range purchaseorders.FieldNames {
		var v any = got
		for _, seg := range poPointers[name] {
			m, _ := v.(map[string]any)
			v = m[seg]
		}
		if !poMatch(name, v, want[name]) {
			wrong = append(wrong, name)
		}
	}
	return wrong
}

func poMatch(name string, got, want any) bool {
	switch name {
	case "supplier_name":
		g, _ := got.(string)
		w, _ := want.(string)
		return got != nil && want != nil && normalised(g) == normalised(w) || got == nil && want == nil
	case "total":
		g, ok := got.(float64)
		w, _ := want.(string)
		wr, _ := new(big.Rat).SetString(w)
		return ok && wr != nil && fmt.Sprintf("%.2f", g) == wr.FloatString(2)
	case "lines":
		g, _ := got.([]any)
		w, _ := want.([]any)
		sorted := func(xs []any) string {
			ss := make([]string, len(xs))
			for i, x := range xs {
				ss[i] = fmt.Sprint(x)
			}
			slices.Sort(ss)
			return strings.Join(ss, "\x00")
		}
		return got != nil && sorted(g) == sorted(w)
	}
	return fmt.Sprintf("%#v", got) == fmt.Sprintf("%#v", want)
}

// normalised is the string rule's normalisation: case, whitespace,
// accents, punctuation.
func normalised(s string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(strings.ToLower(s)) {
		if !unicode.Is(unicode.Mn, r) && !unicode.IsPunct(r) {
			b.WriteRune(r)
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// answerOf plans one document's answer on s, as a chat request with the
// given response format would get it.
func answerOf(t *testing.T, s *Server, text string, rf json.RawMessage, sp sampling) (string, string) {
	t.Helper()
	g, e := s.plan(0, prompt+text, 100, sp, s.declaredOf(rf, prompt+text))
	if e != nil {
		t.Fatal(e.Message)
	}
	return strings.Join(g.tokens, ""), g.finish
}

// poMaxTokens is the example protocol's generation.max_tokens.
const poMaxTokens = 256

var greedy = sampling{temperature: 0, seed: "7"}

// TestDeclared_PurchaseOrders answers the whole purchase-order corpus with
// its schema: the reference weights read every field of every document
// right (the old engine answered date, amount and category instead).
func TestDeclared_PurchaseOrders(t *testing.T) {
	docs, err := purchaseorders.Generate(purchaseorders.DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := newTestServer(t, func(c *Config) { c.Variant = "bf16" })
	for _, d := range docs {
		answer, finish := answerOf(t, s, d.Text, poFormat(), greedy)
		if n := len(splitTokens(answer)); n > poMaxTokens {
			t.Errorf("%s: answer of %d tokens: the example's max_tokens is %d", d.ID, n, poMaxTokens)
		}
		if wrong := poWrong(answer, d.Expected.Object); len(wrong) > 0 || finish != "stop" {
			t.Errorf("%s (%s): fields %v wrong, finish %s\n got  %s\n want %s", d.ID, d.LengthClass, wrong, finish, answer, d.Expected.Object)
		}
	}
}

// TestDeclared_Nested checks the answer's shape: the schema's key order,
// the supplier nested, the lines a list, null for a value not given.
func TestDeclared_Nested(t *testing.T) {
	doc := "PEDIDO DE COMPRA\nNº do pedido: PC-2025/00042\nData do pedido: 3 de março de 2025\nData de entrega: a combinar\nMoeda: BRL\n\n" +
		"Razão social do fornecedor: Ferragens Ipiranga Ltda.\nCNPJ: não informado\n\n" +
		"Itens do pedido:\nCódigo      Descrição   Qtd   Vl. unit.   Vl. total\nFEIP-00001  Porca M8    2     1,00        2,00\nFEIP-00002  Tubo        1     1.200,00    1.200,00\n\n" +
		"Subtotal: R$ 1.202,00\nValor total: R$ 1.234,56\n\nAssinatura: ____________"
	s, _ := newTestServer(t, nil)
	got, _ := answerOf(t, s, doc, poFormat(), greedy)
	want := `{"currency": "BRL", "delivery_date": null, "lines": ["FEIP-00001", "FEIP-00002"], "order_date": "2025-03-03", "order_number": "PC-2025/00042", "signed": false, "supplier": {"name": "Ferragens Ipiranga Ltda.", "tax_id": null}, "total": 1234.56}`
	if got != want {
		t.Errorf("answer\n got  %s\n want %s", got, want)
	}
}

// TestDeclared_SchemaInPrompt: a request without response_format whose
// prompt shows the schema gets the declared answer too (the completions
// endpoint, a protocol without guided decoding).
func TestDeclared_SchemaInPrompt(t *testing.T) {
	s, _ := newTestServer(t, nil)
	text := "Answer with JSON matching this schema:\n" + poSchema + "\n\nDocument:\nPURCHASE ORDER\nPO number: PO-2024-000001\nCurrency: USD\nTotal: USD 1,234.56\nSigned by: Emily Chen"
	g, e := s.plan(0, text, 100, greedy, s.declaredOf(nil, text))
	if e != nil {
		t.Fatal(e.Message)
	}
	got := strings.Join(g.tokens, "")
	want := `{"currency": "USD", "delivery_date": null, "lines": null, "order_date": null, "order_number": "PO-2024-000001", "signed": true, "supplier": {"name": null, "tax_id": null}, "total": 1234.56}`
	if got != want {
		t.Errorf("answer\n got  %s\n want %s", got, want)
	}
}

// TestDeclared_DefaultUnchanged: the default extraction schema, sent as
// response_format or not at all, gets the default answer byte for byte.
func TestDeclared_DefaultUnchanged(t *testing.T) {
	schema, err := os.ReadFile("../../schemas/extraction.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	rf := json.RawMessage(`{"type":"json_schema","json_schema":{"name":"extraction","strict":true,"schema":` + string(schema) + `}}`)
	s, _ := newTestServer(t, nil)
	if d := s.declaredOf(rf, prompt+invoiceEN); d != nil {
		t.Fatalf("the default schema declares %d properties: want the default answer", len(d.props))
	}
	for _, f := range []json.RawMessage{nil, rf} {
		if got, _ := answerOf(t, s, invoiceEN, f, greedy); got != wantInvoiceEN {
			t.Errorf("response_format %s: answer %s, want %s", f, got, wantInvoiceEN)
		}
	}
}

// TestDeclared_Faults injects each content fault into a purchase order and
// checks the fault model carries over: prose, a fence, a missing key, a
// wrong type, a wrong value, a cut answer.
func TestDeclared_Faults(t *testing.T) {
	docs, err := purchaseorders.Generate(purchaseorders.DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	d := docs[0]
	var want map[string]any
	_ = json.Unmarshal([]byte(d.Expected.Object), &want)
	number := want["order_number"].(string)
	clean := map[string]any{}
	s, _ := newTestServer(t, nil)
	plain, _ := answerOf(t, s, d.Text, poFormat(), greedy)
	_ = json.Unmarshal([]byte(plain), &clean)
	tests := []struct {
		fault Fault
		check func(answer, finish string) string
	}{
		{FaultGarbage, func(a, _ string) string {
			if strings.Contains(a, "{") || !strings.Contains(a, "PO-") {
				return "want prose that names the values"
			}
			return ""
		}},
		{FaultFence, func(a, _ string) string {
			if a != "```json\n"+plain+"\n```" {
				return "want the answer in a ```json fence"
			}
			return ""
		}},
		{FaultMissingKey, func(a, _ string) string {
			var m map[string]any
			if json.Unmarshal([]byte(a), &m) != nil || len(m) != len(clean)-1 || m["total"] != nil {
				return "want valid JSON without its last key"
			}
			return ""
		}},
		{FaultStringAmount, func(a, _ string) string {
			var m map[string]any
			if json.Unmarshal([]byte(a), &m) != nil {
				return "want valid JSON"
			}
			n := 0
			for k, v := range m {
				if _, isString := v.(string); isString && fmt.Sprintf("%T", clean[k]) != "string" {
					n++
				}
			}
			if n != 1 {
				return "want one number or boolean written as a string"
			}
			return ""
		}},
		{FaultWrongValue, func(a, _ string) string {
			if wrong := poWrong(a, d.Expected.Object); len(wrong) != 1 || wrong[0] == "invalid" {
				return fmt.Sprintf("want valid JSON with one wrong field, got %v", wrong)
			}
			return ""
		}},
		{FaultTruncate, func(a, finish string) string {
			if finish != "length" || json.Valid([]byte(a)) || !strings.HasPrefix(plain, a) {
				return "want the answer cut, finish length"
			}
			return ""
		}},
	}
	for _, tt := range tests {
		t.Run(string(tt.fault), func(t *testing.T) {
			s, _ := newTestServer(t, func(c *Config) { c.FaultRules = []FaultRule{{Contains: number, Fault: tt.fault}} })
			answer, finish := answerOf(t, s, d.Text, poFormat(), greedy)
			if why := tt.check(answer, finish); why != "" {
				t.Errorf("%s: answer %q finish %s", why, answer, finish)
			}
		})
	}
}

// TestDeclared_Rates answers the corpus on each weight format and with
// injected fault rates: quantised variants go wrong on a few documents,
// int8's among int4's, and each injected fault hits about its share.
func TestDeclared_Rates(t *testing.T) {
	docs, err := purchaseorders.Generate(purchaseorders.DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	wrongDocs := map[string]map[string]bool{}
	for _, variant := range []string{"bf16", "int8", "int4"} {
		s, _ := newTestServer(t, func(c *Config) { c.Variant = variant })
		wrongDocs[variant] = map[string]bool{}
		for _, d := range docs {
			if a, _ := answerOf(t, s, d.Text, poFormat(), greedy); len(poWrong(a, d.Expected.Object)) > 0 {
				wrongDocs[variant][d.ID] = true
			}
		}
	}
	t.Logf("wrong documents: bf16 %d, int8 %d, int4 %d", len(wrongDocs["bf16"]), len(wrongDocs["int8"]), len(wrongDocs["int4"]))
	if len(wrongDocs["bf16"]) != 0 || len(wrongDocs["int4"]) < 2 || len(wrongDocs["int4"]) > 20 || len(wrongDocs["int8"]) >= len(wrongDocs["int4"]) {
		t.Errorf("wrong documents bf16 %d, int8 %d, int4 %d: want 0, fewer, 2-20 (rates %v)", len(wrongDocs["bf16"]), len(wrongDocs["int8"]), len(wrongDocs["int4"]), variantRates)
	}
	for id := range wrongDocs["int8"] {
		if !wrongDocs["int4"][id] {
			t.Errorf("%s: wrong on int8, right on int4", id)
		}
	}

	rates := map[Fault]float64{FaultWrongValue: 0.1, FaultMissingKey: 0.1, FaultStringAmount: 0.1}
	s, _ := newTestServer(t, func(c *Config) { c.FaultRates = rates })
	counts := map[Fault]int{}
	for _, d := range docs {
		f := chooseFault(&s.cfg, documentText(prompt+d.Text), docHash(documentText(prompt+d.Text)))
		counts[f]++
		a, _ := answerOf(t, s, d.Text, poFormat(), greedy)
		if f != FaultNone && len(poWrong(a, d.Expected.Object)) == 0 {
			t.Errorf("%s: fault %s, answer right: %s", d.ID, f, a)
		}
		if f == FaultNone && len(poWrong(a, d.Expected.Object)) != 0 {
			t.Errorf("%s: no fault, answer wrong: %s", d.ID, a)
		}
	}
	for f := range rates {
		if counts[f] < 15 || counts[f] > 50 { // 30 expected; outside [15, 50] is p < 0.001
			t.Errorf("fault %s on %d of %d documents: want about 10%%", f, counts[f], len(docs))
		}
	}
}

// TestParseDeclared reads each JSON Schema form of a property: nested
// objects, lists, enums, dates by format or pattern, numbers, integers,
// booleans; the default extraction schema declares nothing.
func TestParseDeclared(t *testing.T) {
	d := parseDeclared(json.RawMessage(`{"properties":{
 "issued":{"type":"string","format":"date"},
 "paidOn":{"type":["string","null"],"pattern":"^([0-9]{2}/[0-9]{2}/[0-9]{4})$"},
 "count":{"type":["integer","null"]},
 "tags":{"type":"array","items":{"enum":["x","y"]}},
 "payer":{"type":"object","properties":{"active":{"type":"boolean"},"balance_due":{"type":["number","string"]}}},
 "payer_name":{"type":"string"}}}`))
	var got []string
	for _, p := range d.leaves() {
		got = append(got, fmt.Sprintf("%s:%d:%t:%v:%v", p.name, p.kind, p.list, p.words, p.enum))
	}
	want := []string{"issued:2:false:[issued]:[]", "paidOn:2:false:[paid on]:[]", "count:4:false:[count]:[]", "tags:1:true:[tag]:[x y]",
		"active:5:false:[payer active]:[]", "balance_due:3:false:[payer balance due]:[]", "payer_name:0:false:[payer name]:[]"}
	if !slices.Equal(got, want) {
		t.Errorf("leaves\n got  %v\n want %v", got, want)
	}
	if d := parseDeclared(json.RawMessage(`{"properties":{"date":{"type":"string"},"amount":{"type":"number"},"category":{"type":"string"}}}`)); d != nil {
		t.Error("the default fields declare a field set: want nil (the default answer)")
	}
}

// TestServer_DeclaredOverHTTP: a chat completion and a batch of
// completions that send the schema as response_format get the declared
// answers; the same chat without it gets the default fields.
func TestServer_DeclaredOverHTTP(t *testing.T) {
	docs, err := purchaseorders.Generate(purchaseorders.DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	_, ts := newTestServer(t, nil)
	resp, body := post(t, ts.URL+"/v1/chat/completions", chatBody(docs[0].Text, map[string]any{"response_format": poFormat()}))
	var c completion
	if err := json.Unmarshal(body, &c); err != nil || resp.StatusCode != 200 {
		t.Fatalf("chat: status %d, %s", resp.StatusCode, body)
	}
	if wrong := poWrong(c.Choices[0].Message.Content, docs[0].Expected.Object); len(wrong) > 0 {
		t.Errorf("chat: fields %v wrong in %s", wrong, c.Choices[0].Message.Content)
	}
	_, body = post(t, ts.URL+"/v1/chat/completions", chatBody(docs[0].Text, nil))
	c = completion{}
	_ = json.Unmarshal(body, &c)
	if a := c.Choices[0].Message.Content; !strings.HasPrefix(a, `{"date": `) {
		t.Errorf("chat without response_format: %s, want the default fields", a)
	}
	prompts := []string{prompt + docs[1].Text, prompt + docs[2].Text}
	resp, body = post(t, ts.URL+"/v1/completions", map[string]any{"model": "sim-8b", "prompt": prompts, "temperature": 0, "response_format": poFormat()})
	c = completion{}
	if err := json.Unmarshal(body, &c); err != nil || resp.StatusCode != 200 || len(c.Choices) != 2 {
		t.Fatalf("completions: status %d, %s", resp.StatusCode, body)
	}
	for _, ch := range c.Choices {
		if wrong := poWrong(ch.Text, docs[1+ch.Index].Expected.Object); len(wrong) > 0 {
			t.Errorf("completion %d: fields %v wrong in %s", ch.Index, wrong, ch.Text)
		}
	}
}
