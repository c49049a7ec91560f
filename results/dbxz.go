package results

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ulikunitz/xz"
)

// DBNameXZ is results.db compressed with xz, as the committed reference
// runs (reference/*/*/) keep it. Readers open a directory that has
// only this file as if it held results.db, through a decompressed copy;
// writers never touch it.
const DBNameXZ = DBName + ".xz"

// HasDB reports whether dir holds a database a reader can open: results.db,
// or results.db.xz alone.
func HasDB(dir string) bool {
	for _, name := range []string{DBName, DBNameXZ} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// unpackXZ decompresses the xz file at path into a new temporary file and
// returns the copy's path; the caller removes it. A corrupt or truncated
// file is an error that names it and says how to decompress it by hand.
func unpackXZ(ctx context.Context, path string) (string, error) {
	in, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer in.Close()
	zr, err := xz.NewReader(bufio.NewReader(in))
	if err != nil {
		return "", fmt.Errorf("decompress %s: %w (is it an xz file? `xz -dk %s` decompresses it by hand)", path, err, path)
	}
	out, err := os.CreateTemp("", "extractbench-unpacked-*.db")
	if err != nil {
		return "", fmt.Errorf("decompress %s: %w", path, err)
	}
	_, err = io.Copy(out, ctxReader{ctx, zr})
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(out.Name())
		if errors.Is(err, ctx.Err()) {
			return "", fmt.Errorf("decompress %s: %w", path, err)
		}
		return "", fmt.Errorf("decompress %s: %w (`xz -tv %s` tests it; `xz -dk %s` decompresses it by hand)", path, err, path, path)
	}
	return out.Name(), nil
}

// ctxReader stops a long copy when its context is cancelled.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
