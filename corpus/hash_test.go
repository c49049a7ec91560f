package corpus

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"strings"
	"testing"
)

// wholeRecordHash is RecordHash as HashRule states it: the record encoded
// whole, then hashed.
func wholeRecordHash(t *testing.T, d Document) string {
	t.Helper()
	b, err := marshalNoEscape(struct {
		ID       string   `json:"id"`
		Text     string   `json:"text"`
		Expected Expected `json:"expected"`
	}{d.ID, d.Text, d.Expected})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestRecordHash_InPieces: a text hashed a piece at a time hashes as the
// record encoded whole, whatever falls on a piece's edge: multi-byte runes,
// invalid bytes (each encoded \ufffd), escapes, U+2028, HTML characters.
func TestRecordHash_InPieces(t *testing.T) {
	alphabet := []string{"a", "Z", "7", " ", "é", "€", "😀", "\xff", "\xe2\x82", "\"", "\\", "\n", "\t", "\x01", "\u2028", "<", ">", "&", "/"}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{0, 1, hashPiece - 1, hashPiece, hashPiece + 1, 3*hashPiece + 17} {
		var b strings.Builder
		for b.Len() < size {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		amount, cat := "12.50", "rent"
		d := Document{ID: "doc-<1>", Text: b.String(), Expected: Expected{Amount: &amount, Category: &cat}}
		if got, want := RecordHash(d), wholeRecordHash(t, d); got != want {
			t.Errorf("text of %d bytes: RecordHash = %s, want %s", size, got, want)
		}
	}
	// A rune cut by the piece's edge, at every offset.
	for off := range 4 {
		d := Document{ID: "x", Text: strings.Repeat("a", hashPiece-off) + strings.Repeat("😀\xf0\x9f", 3)}
		if got, want := RecordHash(d), wholeRecordHash(t, d); got != want {
			t.Errorf("rune at the edge, offset %d: RecordHash = %s, want %s", off, got, want)
		}
	}
}
