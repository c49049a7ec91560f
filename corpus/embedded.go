package corpus

import (
	"embed"
	"io/fs"
	"os"
)

// DefaultName is what a protocol writes (corpus: default) to use the default
// corpus embedded in the binary, so that the main job runs from any directory.
const DefaultName = "default"

//go:embed default/documents.jsonl default/manifest.json
var defaultFS embed.FS

// LoadDefault loads the embedded copy of corpus/default. Its Path is
// "default"; its manifest hash is the same as the directory's.
func LoadDefault() (*Corpus, error) {
	return loadDefault(nil)
}

// LoadDefaultFields loads the embedded default corpus for a protocol that
// declares fields (LoadFields): its expectations follow date, amount and
// category, so exp must declare those three, in that order.
func LoadDefaultFields(exp Expectations) (*Corpus, error) {
	return loadDefault(&exp)
}

func loadDefault(exp *Expectations) (*Corpus, error) {
	var docs []Document
	s, err := readFS(defaultFS, "default", exp, func(d *Document, _ int, _ int64, _ int, _ []byte) { docs = append(docs, *d) }, func() { docs = nil }, false)
	if err != nil {
		return nil, err
	}
	if len(s.problems) > 0 {
		return nil, &LoadError{Path: DefaultName, Problems: s.problems}
	}
	s.corpus.Documents = docs
	s.corpus.Path = DefaultName
	return s.corpus, nil
}

// osFS reads paths as the os package does (relative to the working
// directory, absolute paths allowed), which os.DirFS cannot.
type osFS struct{}

func (osFS) Open(name string) (fs.File, error) { return os.Open(name) }

func (osFS) Stat(name string) (fs.FileInfo, error) { return os.Stat(name) }

func (osFS) ReadFile(name string) ([]byte, error) { return os.ReadFile(name) }
