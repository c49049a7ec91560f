package numfmt

import (
	"errors"
	"strings"
	"testing"
)

// failAfter fails every write after its first n.
type failAfter struct {
	n   int
	buf strings.Builder
}

var errFull = errors.New("disk full")

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errFull
	}
	f.n--
	return f.buf.Write(p)
}

func TestWriter_KeepsFirstError(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ok      int
		want    string
		wantErr error
	}{
		{"every write succeeds", 10, "a 1\nb 2\nc\n", nil},
		{"the second write fails", 1, "a 1\n", errFull},
		{"the first write fails", 0, "", errFull},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &failAfter{n: tc.ok}
			w := &Writer{W: f}
			w.Printf("a %d\n", 1)
			w.Printf("b %d\n", 2)
			_, err := w.Write([]byte("c\n"))
			if got := f.buf.String(); got != tc.want {
				t.Errorf("written %q, want %q", got, tc.want)
			}
			if !errors.Is(w.Err, tc.wantErr) || !errors.Is(err, tc.wantErr) {
				t.Errorf("Err = %v, Write = %v, want %v", w.Err, err, tc.wantErr)
			}
		})
	}
}
