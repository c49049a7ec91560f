package corpus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// File names inside a corpus directory.
const (
	DocumentsFile = "documents.jsonl"
	ManifestFile  = "manifest.json"
)

// EncodeDocuments returns docs as documents.jsonl: one compact JSON object a
// line, keys in the order of Document, no HTML escaping, "\n" after each.
func EncodeDocuments(docs []Document) ([]byte, error) {
	var buf bytes.Buffer
	for _, d := range docs {
		b, err := marshalNoEscape(d)
		if err != nil {
			return nil, fmt.Errorf("encode document %s: %w", d.ID, err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	return buf.Bytes(), nil
}

// EncodeManifest returns m as indented JSON with a final newline.
func EncodeManifest(m Manifest) ([]byte, error) {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode manifest: %w", err)
	}
	return append(b, '\n'), nil
}

// WriteDir writes docs into dir as documents.jsonl and a manifest.json
// computed from them with the given category enum, creating dir if needed.
func WriteDir(dir string, docs []Document, categories []string) error {
	return writeDir(dir, docs, ComputeManifest(docs, categories, nil))
}

// WriteDirFields writes a corpus of the declared fields names (in the
// protocol's order) into dir: documents.jsonl, each document's expected
// object its Expected.Object (made canonical: keys in names' order; every
// name a key, null for a missing value, and no other key), and a
// manifest.json that records names as field_names and hashes by
// DeclaredHashRule. fields, the definitions written into the manifest, may
// be nil. A generator builds each Expected.Object with ExpectedObject.
func WriteDirFields(dir string, docs []Document, names []string, fields map[string]string) error {
	if len(names) == 0 {
		return fmt.Errorf("write corpus %s: no field names", dir)
	}
	canon := make([]Document, len(docs))
	for i, d := range docs {
		obj, err := CanonicalObject(names, d.Expected.Object)
		if err != nil {
			return fmt.Errorf("write corpus %s: document %s: %w", dir, d.ID, err)
		}
		d.Expected = Expected{Object: obj}
		canon[i] = d
	}
	return writeDir(dir, canon, ComputeManifestFields(canon, names, fields))
}

func writeDir(dir string, docs []Document, m Manifest) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create corpus directory %s: %w", dir, err)
	}
	data, err := EncodeDocuments(docs)
	if err != nil {
		return err
	}
	man, err := EncodeManifest(m)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, DocumentsFile), data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", DocumentsFile, err)
	}
	if err := os.WriteFile(filepath.Join(dir, ManifestFile), man, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", ManifestFile, err)
	}
	return nil
}
