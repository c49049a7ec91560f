package corpus

import "testing"

func TestLoadDefaultMatchesDirectory(t *testing.T) {
	emb, err := LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := Load("default")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := emb.Manifest.SHA256, dir.Manifest.SHA256; got != want {
		t.Errorf("embedded sha256 %s, directory %s", got, want)
	}
	if got, want := len(emb.Documents), 300; got != want {
		t.Errorf("embedded documents = %d, want %d", got, want)
	}
}
