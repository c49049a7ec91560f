package eval

import (
	"testing"

	"github.com/shopspring/decimal"
)

func TestParseDate(t *testing.T) {
	tests := []struct {
		in      string
		y, m, d int
		ok      bool
	}{
		{"2025-03-14", 2025, 3, 14, true},
		{"2024-02-29", 2024, 2, 29, true},
		{"2000-02-29", 2000, 2, 29, true}, // divisible by 400
		{"1900-02-29", 0, 0, 0, false},    // divisible by 100
		{"2025-02-29", 0, 0, 0, false},
		{"2025-02-30", 0, 0, 0, false},
		{"2025-04-31", 0, 0, 0, false},
		{"2025-12-31", 2025, 12, 31, true},
		{"2025-13-01", 0, 0, 0, false},
		{"2025-00-01", 0, 0, 0, false},
		{"2025-01-00", 0, 0, 0, false},
		{"0000-01-01", 0, 1, 1, true},
		{"2025-3-14", 0, 0, 0, false},
		{"14/03/2025", 0, 0, 0, false},
		{"2025-03-14 ", 0, 0, 0, false},
		{"2025-03-1x", 0, 0, 0, false},
		{"+025-03-14", 0, 0, 0, false},
		{"２025-03-14", 0, 0, 0, false}, // a full-width digit
		{"", 0, 0, 0, false},
	}
	for _, tt := range tests {
		y, m, d, ok := ParseDate(tt.in)
		if ok != tt.ok || y != tt.y || m != tt.m || d != tt.d {
			t.Errorf("ParseDate(%q): got %d-%d-%d %v, want %d-%d-%d %v", tt.in, y, m, d, ok, tt.y, tt.m, tt.d, tt.ok)
		}
	}
}

func TestParseAmount(t *testing.T) {
	tests := []struct {
		in   string
		want string // the decimal; "huge" for out of range; "" for an error
	}{
		{"1234.56", "1234.56"},
		{"1234.560", "1234.56"},
		{"1e3", "1000"},
		{"1E+3", "1000"},
		{"-80.00", "-80"},
		{"-0", "0"},
		{"0.004", "0.004"},
		{"123456789012345678901234567890.123456789", "123456789012345678901234567890.123456789"},
		{"1e40", "10000000000000000000000000000000000000000"},
		{"1e41", "huge"},
		{"-9e999999999999999999", "huge"},
		{"1e-41", "0"},
		{"0e999999999", "0"},
		{"1.5e-3", "0.0015"},
		{"+1", ""},
		{"01", ""},
		{".5", ""},
		{"1.", ""},
		{"1e", ""},
		{"0x10", ""},
		{"NaN", ""},
		{"1_000", ""},
		{" 1", ""},
		{"", ""},
	}
	for _, tt := range tests {
		got, err := ParseAmount(tt.in)
		switch {
		case tt.want == "":
			if err == nil {
				t.Errorf("ParseAmount(%q): got %v, want an error", tt.in, got)
			}
		case err != nil:
			t.Errorf("ParseAmount(%q): got error %v, want %s", tt.in, err, tt.want)
		case tt.want == "huge":
			if !got.Huge {
				t.Errorf("ParseAmount(%q): got %v, want Huge", tt.in, got.Value)
			}
		case got.Huge || !got.Value.Equal(decimal.RequireFromString(tt.want)):
			t.Errorf("ParseAmount(%q): got %v (huge %v), want %s", tt.in, got.Value, got.Huge, tt.want)
		}
	}
}

func TestAmount_Close(t *testing.T) {
	tests := []struct {
		got, want string
		close     bool
	}{
		{"1234.56", "1234.56", true},
		{"1234.565", "1234.56", true}, // exactly half a cent: inclusive
		{"1234.5650001", "1234.56", false},
		{"1234.555", "1234.56", true},
		{"-0.004", "0", true},
		{"0.005", "0", true},
		{"-0.006", "0", false},
		{"80", "-80", false},
		{"-80.001", "-80", true},
		{"1e41", "0", false},
	}
	for _, tt := range tests {
		a, err := ParseAmount(tt.got)
		if err != nil {
			t.Fatalf("ParseAmount(%q): %v", tt.got, err)
		}
		if got := a.Close(decimal.RequireFromString(tt.want)); got != tt.close {
			t.Errorf("%s close to %s: got %v, want %v", tt.got, tt.want, got, tt.close)
		}
	}
}
