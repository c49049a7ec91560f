package numfmt

import (
	"bytes"
	"testing"
)

func TestGroupDigits(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", -1234567: "-1,234,567", 16060522496: "16,060,522,496"} {
		if got := GroupDigits(n); got != want {
			t.Errorf("GroupDigits(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestGiBString(t *testing.T) {
	for b, want := range map[int64]string{512: "512 B", 2048: "2.0 KiB", 3 << 20: "3.0 MiB", 16060522496: "14.96 GiB", -(2 << 30): "-2.00 GiB"} {
		if got := GiBString(b); got != want {
			t.Errorf("GiBString(%d) = %q, want %q", b, got, want)
		}
	}
}

func TestWriteJSON(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, map[string]int{"a": 1}); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String(), "{\n  \"a\": 1\n}\n"; got != want {
		t.Errorf("WriteJSON = %q, want %q", got, want)
	}
}
