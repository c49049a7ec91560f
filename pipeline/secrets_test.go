//go:build linux

package pipeline_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/extractbench/extractbench/engines/hostile"
	"github.com/extractbench/extractbench/engines/process"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/report"
)

func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// TestRun_SecretsNeverWritten is the hardening issue's item 13: a whole
// run whose engines echo its secrets (a started engine printing its
// arguments, as vLLM does, split across writes and base64-encoded; an
// engine echoing the key JSON-escaped in an error body and in streamed
// content; a URL with credentials) leaves no secret in any file of its
// results directory, in the progress output, or in the reports, in plain,
// JSON-escaped or base64 form. The credentials of the URL are still used.
func TestRun_SecretsNeverWritten(t *testing.T) {
	dir := t.TempDir()
	key := "sk-eb-" + randomHex(t, 16)
	password := "pw-" + randomHex(t, 8)
	userinfo := "ebuser:" + password
	t.Setenv("EB_TEST_SECRET_KEY", key)

	addr := freeAddr(t)
	// Two writes that split the key, then its base64, then the engine.
	start := `printf '%s' "non-default args: {'api_key': '${EB_TEST_SECRET_KEY%${EB_TEST_SECRET_KEY#????????????????}}"; ` +
		`sleep 0.05; printf '%s\n' "${EB_TEST_SECRET_KEY#????????????????}'}"; ` +
		`printf 'auth %s\n' "$(printf '%s' "$EB_TEST_SECRET_KEY" | base64)"; ` + testEngineCommand(addr)
	echo := hostile.MustNew(t, hostile.SecretsEcho, hostile.Options{APIKey: key})
	basic := hostile.MustNew(t, hostile.SecretsBasicAuth, hostile.Options{APIKey: userinfo})
	withCreds, err := url.Parse(basic.URL)
	if err != nil {
		t.Fatal(err)
	}
	withCreds.User = url.UserPassword("ebuser", password)

	proto := filepath.Join(dir, "p.yaml")
	p := fmt.Sprintf(`name: secrets
corpus: %s
prompt: {user: "Extract date, amount and category.\n\n{{document}}"}
generation: {max_tokens: 64, temperature: 0}
acceptance: {min_accepted: 0}
sweep: {mode: concurrency, levels: [1], repetitions: 1, warmup: 0}
request_timeout: 5s
variants:
  - name: started
    engine: {url: "http://%s", model: sim-8b, api_key_env: EB_TEST_SECRET_KEY, start: %q, ready_timeout: 30s}
  - name: echo
    engine: {url: %q, model: %s, api_key_env: EB_TEST_SECRET_KEY}
  - name: basic
    engine: {url: %q, model: %s}
`, writeSmallCorpus(t, dir, 6), addr, start, echo.URL, hostile.Model, withCreds.String(), hostile.Model)
	if err := os.WriteFile(proto, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	var progress bytes.Buffer
	if _, err := pipeline.Run(context.Background(), pipeline.Options{ProtocolPath: proto, OutDir: out, Progress: &progress, Quiet: true, Process: process.Starter{}}); err != nil {
		t.Fatalf("run: %v\n%s", err, progress.String())
	}
	if err := report.Write(context.Background(), out); err != nil {
		t.Fatal(err)
	}

	texts := resultsTexts(t, out, progress.String())
	t.Run("no secret written", func(t *testing.T) { noSecretIn(t, out, texts, secretForms(key, password, userinfo)) })
	t.Run("echoes redacted", func(t *testing.T) { echoesRedacted(t, out, texts) })
}

// secretForms are the forms of the run's secrets an engine echoes, by name.
func secretForms(key, password, userinfo string) map[string]string {
	b64 := func(e *base64.Encoding, s string) string { return e.EncodeToString([]byte(s)) }
	return map[string]string{
		"key": key, "key JSON-escaped": hostile.EscapeJSON(key), "key JSON-escaped (upper case)": strings.ToUpper(hostile.EscapeJSON(key)),
		"key base64": b64(base64.StdEncoding, key), "key base64 (raw URL)": b64(base64.RawURLEncoding, key),
		"password": password, "password JSON-escaped": hostile.EscapeJSON(password), "userinfo base64 (Basic auth)": b64(base64.StdEncoding, userinfo),
		"userinfo": userinfo,
	}
}

// resultsTexts are the progress output and every file of the results
// directory out, a Parquet file also with its values decoded, by path.
func resultsTexts(t *testing.T, out, progress string) map[string]string {
	texts := map[string]string{"progress output": progress}
	err := filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		texts[path] = string(b)
		if strings.HasSuffix(path, ".parquet") {
			texts[path+" (decoded)"] = parquetText(t, path) // its pages are compressed: read the values
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return texts
}

// noSecretIn: no text holds any form of a secret, and the texts cover the
// results directory's files.
func noSecretIn(t *testing.T, out string, texts, forms map[string]string) {
	for _, want := range []string{results.DBName, "requests.parquet", "raw_table.csv", "report.html", "report.md", "engine-started.log"} {
		if _, ok := texts[filepath.Join(out, want)]; !ok {
			t.Errorf("no %s in the results directory: the check would not cover it", want)
		}
	}
	for path, text := range texts {
		for name, form := range forms {
			if strings.Contains(text, form) {
				t.Errorf("%s holds the %s", path, name)
			}
		}
	}
}

// echoesRedacted: the secrets were echoed, and redacted where they were;
// the URL's credentials were still sent.
func echoesRedacted(t *testing.T, out string, texts map[string]string) {
	if log := texts[filepath.Join(out, "engine-started.log")]; !strings.Contains(log, "non-default args: {'api_key': '"+results.Redacted+"'}") ||
		!strings.Contains(log, "auth "+results.Redacted) {
		t.Errorf("the engine log does not show the printed key redacted:\n%s", log)
	}
	echoed, basicOK, basicRows := echoCounts(t, filepath.Join(out, "requests.parquet"))
	if echoed[0] == 0 || echoed[1] == 0 {
		t.Errorf("echo variant: %d error bodies and %d outputs show a redaction; want some of each (the engine echoed the key)", echoed[0], echoed[1])
	}
	if basicRows == 0 || basicOK != basicRows {
		t.Errorf("basic variant: %d of %d requests ok; the URL's credentials must still be sent", basicOK, basicRows)
	}
}

// echoCounts counts the echo variant's error bodies and outputs that show
// a redaction, and the basic variant's requests: those that completed, all.
func echoCounts(t *testing.T, path string) (echoed [2]int, basicOK, basicRows int) {
	variants := parquetStrings(t, path, "variant")
	kinds := parquetStrings(t, path, "transport_kind")
	outputs := parquetStrings(t, path, "output")
	bodies := parquetStrings(t, path, "error_body")
	for i, v := range variants {
		switch v {
		case "echo":
			if strings.Contains(bodies[i], results.Redacted) {
				echoed[0]++
			}
			if strings.Contains(outputs[i], results.Redacted) {
				echoed[1]++
			}
		case "basic":
			basicRows++
			if kinds[i] == "" { // NULL: the exchange completed
				basicOK++
			}
		}
	}
	return echoed, basicOK, basicRows
}

// parquetText is every string value of a Parquet file, one per line.
func parquetText(t *testing.T, path string) string {
	t.Helper()
	tbl := readParquet(t, path)
	defer tbl.Release()
	var b strings.Builder
	for c := range int(tbl.NumCols()) {
		for _, chunk := range tbl.Column(c).Data().Chunks() {
			if col, ok := chunk.(*array.String); ok {
				for i := range col.Len() {
					b.WriteString(col.Value(i) + "\n")
				}
			}
		}
	}
	return b.String()
}
