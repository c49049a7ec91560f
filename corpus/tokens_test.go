package corpus

import (
	"strings"
	"testing"
)

func TestApproxTokens(t *testing.T) {
	tests := []struct {
		text string
		want int
	}{
		{"", 0},
		{"the", 1},
		{"invoice", 2},     // 7 letters: ceil(7/4)
		{"Total due", 3},   // 1 + 2
		{"1234.56", 4},     // "123" "4" "." "56"
		{"R$ 1.234,56", 7}, // R $ 1 . 234 , 56
		{"emissão", 2},     // accented letters stay in the word
		{"a\n\n\nb", 3},    // a line-break run is one token
		{"..........", 2},  // a run of one symbol: ceil(10/8)
		{"____/____", 3},   // two runs and a slash
		{"日本語", 3},         // no spaces: a token a character
		{"   \t ", 0},      // spaces are free
		{"12/03/2025", 6},  // 12 / 03 / 202 5
		{string([]byte{0xff}) + "a" + string([]byte{0xfe}), 3}, // an invalid byte is a symbol
	}
	for _, tt := range tests {
		if got := ApproxTokens(tt.text); got != tt.want {
			t.Errorf("ApproxTokens(%q) = %d, want %d", tt.text, got, tt.want)
		}
	}
}

// TestApproxTokens_Additive checks the property the generator relies on to
// size documents block by block: blocks joined by a blank line cost the sum
// of their tokens plus one per separator.
func TestApproxTokens_Additive(t *testing.T) {
	blocks := []string{"Fatura Nº 123", "Data de emissão: 12/03/2025", "Total ........ R$ 1.234,56"}
	want := 0
	for _, b := range blocks {
		want += ApproxTokens(b)
	}
	want += len(blocks) - 1
	if got := ApproxTokens(strings.Join(blocks, "\n\n")); got != want {
		t.Errorf("joined = %d, want %d", got, want)
	}
}

func TestClassOf(t *testing.T) {
	tests := []struct {
		tokens int
		want   LengthClass
		ok     bool
	}{
		{10, Short, true}, {299, Short, true}, {300, Usual, true}, {1500, Usual, true},
		{1501, "", false}, {5499, "", false}, {5500, Long, true}, {7500, Long, true}, {7501, "", false},
	}
	for _, tt := range tests {
		got, ok := ClassOf(tt.tokens)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ClassOf(%d) = %q, %v; want %q, %v", tt.tokens, got, ok, tt.want, tt.ok)
		}
	}
}

func FuzzApproxTokens(f *testing.F) {
	f.Add("Data de emissão: 12/03/2025\nTotal: R$ 1.234,56")
	f.Add("....____\n\n日本")
	f.Fuzz(func(t *testing.T, s string) {
		n := ApproxTokens(s)
		if n < 0 || n > len(s) {
			t.Fatalf("ApproxTokens(%q) = %d, outside [0, %d]", s, n, len(s))
		}
		if strings.TrimSpace(s) != "" && n == 0 {
			t.Fatalf("ApproxTokens(%q) = 0 for non-blank text", s)
		}
	})
}
