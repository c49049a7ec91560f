package pipeline

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestRun_KeyWithLineBreakIsConfiguration is issue 40 item 10's second
// error: an API key holding a line break (read from a file with its
// newline) is a configuration problem named before anything starts
// (ValidationError, exit 2). Sent, it failed every request before it left,
// and the run said the engine was not answering.
func TestRun_KeyWithLineBreakIsConfiguration(t *testing.T) {
	for _, tc := range []struct {
		name, key, want string
	}{
		{"newline", "sk-test\n", "EXTRACTBENCH_TEST_KEY holds a line break at byte 8"},
		{"carriage return", "sk-\r\ntest", "EXTRACTBENCH_TEST_KEY holds a line break at byte 4"},
		{"control character", "sk-\x01", `EXTRACTBENCH_TEST_KEY holds a control character ('\x01') at byte 4`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("EXTRACTBENCH_TEST_KEY", tc.key)
			dir := t.TempDir()
			proto := envProtocol(t, dir, vllmLike(t, "0.11.0").URL, ", api_key_env: EXTRACTBENCH_TEST_KEY")
			_, err := Run(context.Background(), Options{ProtocolPath: proto, OutDir: filepath.Join(dir, "out"), Quiet: true})
			var ve *ValidationError
			if !errors.As(err, &ve) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), tc.key) {
				t.Fatalf("err = %v, want a ValidationError saying %q (and not the key)", err, tc.want)
			}
			if !strings.Contains(err.Error(), "variants.0.engine.api_key_env") {
				t.Errorf("err = %v, want it to name the protocol's field", err)
			}
		})
	}
}
