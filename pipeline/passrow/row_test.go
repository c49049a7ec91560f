package passrow

import (
	"math"
	"testing"
)

func TestRoundPtr(t *testing.T) {
	i := func(v int64) *int64 { return &v }
	tests := []struct {
		in   *float64
		want *int64
	}{
		{nil, nil},
		{fp(2.4), i(2)},
		{fp(2.5), i(3)},
		{fp(-7), i(-7)}, // int64(v + 0.5) made it -6
		{fp(-2.5), i(-3)},
		{fp(0.49999999999999994), i(0)}, // v + 0.5 rounds up to 1 in float64
		{fp(1 << 53), i(1 << 53)},
		{fp(-(1 << 63)), i(math.MinInt64)},
		{fp(1 << 63), nil},
		{fp(1e300), nil}, // was -9223372036854775808
		{fp(-1e300), nil},
		{fp(math.Inf(1)), nil},
		{fp(math.NaN()), nil},
	}
	for _, tt := range tests {
		if got := roundPtr(tt.in); !sameInt(got, tt.want) {
			t.Errorf("roundPtr(%v) = %v, want %v", deref(tt.in), deref64(got), deref64(tt.want))
		}
	}
}

func sameInt(a, b *int64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

func fp(v float64) *float64 { return &v }

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
