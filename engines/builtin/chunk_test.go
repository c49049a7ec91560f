package builtin

import (
	"encoding/json"
	"testing"
)

// marshalChunk is the reference the chunk encoder must match: the response
// struct of one choice, through json.Marshal.
func marshalChunk(t *testing.T, wr *writer, choice any, u *usage) string {
	t.Helper()
	resp := response{ID: wr.id, Object: wr.object(true), Created: wr.created, Model: wr.model, Choices: []any{choice}}
	switch {
	case u != nil:
		resp.Usage = u
	case wr.includeUsage:
		resp.Usage = nullUsage{}
	}
	b, err := json.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestChunkEncoderMatchesMarshal(t *testing.T) {
	writers := []*writer{
		{kind: "chat", id: "chatcmpl-1f", model: "sim-8b", created: 1767225600, includeUsage: true},
		{kind: "chat", id: "chatcmpl-2", model: "a<b>&\"c\"", created: 0},
		{kind: "text", id: "cmpl-3", model: "sim-1b-int4", created: 42, includeUsage: true},
		{kind: "text", id: "cmpl-4", model: "mödel\u2028", created: -1},
	}
	texts := []string{"", `{"`, "date", ` "2024-03-15`, "\n```", "<&>", "tab\tcr\rbs\\ff\fbell\a", "\x00\x1f\x7f", "é€😀", "\u2028\u2029", "bad\xffutf8\xe2\x82"}
	for _, wr := range writers {
		enc := newChunkEncoder(wr)
		if wr.kind == "chat" {
			want := marshalChunk(t, wr, chatChoice{Delta: &chatDelta{Role: "assistant", Content: strPtr("")}}, nil)
			if got := string(enc.appendRole(nil)); got != want {
				t.Errorf("%s role chunk:\n got %s\nwant %s", wr.id, got, want)
			}
		}
		for index, text := range texts {
			for _, finish := range []string{"", "stop", "length"} {
				var fp *string
				if finish != "" {
					fp = strPtr(finish)
				}
				var choice any = textChoice{Index: index, Text: text, FinishReason: fp}
				if wr.kind == "chat" {
					d := &chatDelta{}
					if text != "" {
						d.Content = strPtr(text)
					}
					choice = chatChoice{Index: index, Delta: d, FinishReason: fp}
				}
				for _, u := range []*usage{nil, {PromptTokens: 210, CompletionTokens: index, TotalTokens: 210 + index}} {
					want := marshalChunk(t, wr, choice, u)
					if got := string(enc.appendPiece([]byte("data: "), index, text, finish, u)); got != "data: "+want {
						t.Errorf("%s piece %q finish %q usage %v:\n got %s\nwant data: %s", wr.id, text, finish, u, got, want)
					}
				}
			}
		}
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", `"quoted" \back`, "<script>&", "\x00\b\f\n\r\t\x1f\x7f", "é\u2028\u2029", "\xff\xfe", "\xe2\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONString(nil, s); string(got) != string(want) {
			t.Errorf("appendJSONString(%q) = %s, want %s", s, got, want)
		}
	})
}
