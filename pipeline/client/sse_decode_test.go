package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// streamPayloads returns the data of every event in testdata/streams.
func streamPayloads(tb testing.TB) [][]byte {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "streams", "*.sse"))
	captured, _ := filepath.Glob(filepath.Join("testdata", "llamacpp", "*.sse"))
	files = append(files, captured...)
	if err != nil || len(files) == 0 {
		tb.Fatalf("no stream files: %v", err)
	}
	var out [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		for _, line := range bytes.Split(b, []byte("\n")) {
			line = bytes.TrimSpace(line)
			if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				out = append(out, bytes.TrimSpace(d))
			}
		}
	}
	return out
}

// sharedScratch is reused across every check, as a stream reuses its own.
var sharedScratch chunkScratch

// checkDecodeChunk fails when the fast path accepts data and json.Unmarshal
// rejects it or decodes something else.
func checkDecodeChunk(t *testing.T, data []byte) (fast bool) {
	t.Helper()
	var got, want chunk
	fast = fastChunk(data, &got, nil)
	err := json.Unmarshal(data, &want)
	if fast && err != nil {
		t.Fatalf("fast path accepted %q, json.Unmarshal says %v", data, err)
	}
	if fast && !reflect.DeepEqual(got, want) {
		t.Fatalf("fast path decoded %q as\n%#v\njson.Unmarshal as\n%#v", data, got, want)
	}
	var viaDecode chunk
	if derr := decodeChunk(data, &viaDecode, &sharedScratch); (derr == nil) != (err == nil) || (err == nil && !reflect.DeepEqual(viaDecode, want)) {
		t.Fatalf("decodeChunk(%q) = %#v, %v; json.Unmarshal = %#v, %v", data, viaDecode, derr, want, err)
	}
	return fast
}

func TestDecodeChunk(t *testing.T) {
	tests := []struct {
		in       string
		wantFast bool
	}{
		{`{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"{\"date\": \"2024-\u00e9\n"},"logprobs":null,"finish_reason":null}],"usage":null}`, true},
		{`{"choices":[{"index":1,"text":"a/b\/c\t","finish_reason":"length"}]}`, true},
		{`{"choices":[],"usage":{"prompt_tokens":412,"total_tokens":437,"completion_tokens":25,"prompt_tokens_details":{"cached_tokens":0}}}`, true},
		{`{"choices":null,"usage":{}}`, true},
		{`{"choices":[],"usage":{"completion_tokens":26,"prompt_tokens":211,"prompt_tokens_details":{"cached_tokens":210}},"timings":{"cache_n":210,"prompt_ms":105.251}}`, true},
		{`{"choices":[],"usage":{"prompt_tokens":1,"prompt_tokens_details":null},"timings":null}`, true},
		{`{"timings":{"cache_n":1},"timings":{"cache_n":2}}`, true},                                     // the last, as json.Unmarshal
		{`{"choices":[],"usage":{"prompt_tokens":1,"prompt_tokens":2,"completion_tokens":null}}`, true}, // a count's null leaves it, as json.Unmarshal
		{`{"choices":[],"usage":{"prompt_tokens":1e30,"completion_tokens":3.5}}`, false},                // not whole counts: json.Unmarshal (tokenCount)
		{`{"Timings":{"cache_n":1}}`, false},
		{`{"usage":{"Prompt_Tokens_Details":{}}}`, false},
		{`{"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"a":[1,-2.5e+3,true,false,null]}]},"finish_reason":"stop"}]}`, true},
		{`{"choices":[{"index":0,"delta":null}]}`, true},
		{`{"error":{"message":"boom","code":500}}`, true},
		{`{"error":"text","error_type":"overloaded"}`, true},
		{` { "choices" : [ { "index" : 0 , "delta" : { "content" : "x" } } ] } `, true},
		{`{}`, true},
		// Left to json.Unmarshal: folded, escaped and duplicate keys, type
		// mismatches, surrogates, invalid UTF-8, bad syntax.
		{`{"Choices":[{"index":0,"delta":{"content":"x"}}]}`, false},
		{`{"choices":[{"INDEX":1}]}`, false},
		{`{"choic\u0065s":[]}`, false},
		{`{"choices":[],"choices":[{"index":0}]}`, false},
		{`{"choices":[{"index":"0"}]}`, false},
		{`{"choices":[{"index":1.0}]}`, false},
		{`{"choices":[{"index":0,"delta":{"content":"\ud83d\ude00"}}]}`, false},
		{"{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\xff\"}}]}", false},
		{`{"choices":[{"index":0,"delta":{"content":"x"}}]`, false},
		{`{"choices":[{"index":0}]} x`, false},
		{`{"usage":{"prompt_tokens":01}}`, false},
		{`{"a":[1,2,]}`, false},
		{`{"a":-}`, false},
		{`null`, false},
		{`[]`, false},
		{`{"choices":[null]}`, false},
	}
	for _, tt := range tests {
		if got := checkDecodeChunk(t, []byte(tt.in)); got != tt.wantFast {
			t.Errorf("fastChunk(%s) took the fast path: %v, want %v", tt.in, got, tt.wantFast)
		}
	}
}

// TestDecodeChunk_EveryField puts each key of each of the chunk's structs,
// read from their tags as the scanner reads them, at its place with values
// of every JSON type, and checks the fast path decodes what json.Unmarshal
// does, and takes a value of the field's own type (a string, *string, int
// or raw JSON) itself: a field added to a struct is decoded right, and
// fast, with no case in the scanner.
func TestDecodeChunk_EveryField(t *testing.T) {
	levels := []struct {
		name   string
		typ    reflect.Type
		fields structFields
		wrap   string
	}{
		{"chunk", reflect.TypeFor[chunk](), chunkFields, `{%s}`},
		{"choice", reflect.TypeFor[chunkChoice](), choiceFields, `{"choices":[{%s}]}`},
		{"message", reflect.TypeFor[chunkMessage](), messageFields, `{"choices":[{"index":0,"delta":{%s}}]}`},
		{"usage", reflect.TypeFor[usage](), usageFields, `{"choices":[],"usage":{%s}}`},
	}
	own := map[reflect.Type]string{
		reflect.TypeFor[string](): `"s"`, reflect.TypeFor[*string](): `"s"`, reflect.TypeFor[int](): `7`,
		reflect.TypeFor[json.RawMessage](): `{"a":[1,"b"]}`,
	}
	for _, l := range levels {
		if len(l.fields.keys) != l.typ.NumField() {
			t.Errorf("%s: %d keys read from %d fields", l.name, len(l.fields.keys), l.typ.NumField())
		}
		for _, key := range l.fields.keys {
			for _, v := range []string{`null`, `"s"`, `7`, `-1.5`, `true`, `{}`, `{"a":[1,"b"]}`, `[]`, `[{"content":"x"}]`} {
				checkDecodeChunk(t, []byte(fmt.Sprintf(l.wrap, `"`+key+`":`+v)))
			}
			ft := l.typ.Field(l.fields.index[key]).Type
			if v, ok := own[ft]; ok && !checkDecodeChunk(t, []byte(fmt.Sprintf(l.wrap, `"`+key+`":`+v))) {
				t.Errorf("%s.%s (%s) = %s missed the fast path", l.name, key, ft, v)
			}
		}
	}
}

// TestDecodeChunkStreams checks every recorded engine's events, and that
// the chunks that carry tokens take the fast path.
func TestDecodeChunkStreams(t *testing.T) {
	slow := 0
	payloads := streamPayloads(t)
	for _, d := range payloads {
		if string(d) == "[DONE]" || len(d) == 0 {
			continue
		}
		if !checkDecodeChunk(t, d) && json.Valid(d) {
			slow++
			t.Logf("slow path: %s", d)
		}
	}
	if slow > 0 {
		t.Errorf("%d valid recorded chunks of %d missed the fast path", slow, len(payloads))
	}
}

func FuzzDecodeChunk(f *testing.F) {
	for _, d := range streamPayloads(f) {
		f.Add(d)
	}
	f.Add([]byte(`{"choices":[{"index":0,"delta":{"content":"\u2028<&>\\"}}],"usage":{"prompt_tokens":-0,"completion_tokens":7}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecodeChunk(t, data)
	})
}

// BenchmarkDecodeChunk decodes every recorded engine's events as a stream
// does, one scratch reused; one op is all of them.
func BenchmarkDecodeChunk(b *testing.B) {
	var payloads [][]byte
	for _, d := range streamPayloads(b) {
		if json.Valid(d) {
			payloads = append(payloads, d)
		}
	}
	var sc chunkScratch
	b.ReportAllocs()
	for b.Loop() {
		for _, d := range payloads {
			var c chunk
			if err := decodeChunk(d, &c, &sc); err != nil {
				b.Fatal(err)
			}
		}
	}
}
