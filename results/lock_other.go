//go:build !unix

package results

import (
	"errors"
	"os"
)

var errLocked = errors.New("locked")

// flock is a no-op where flock(2) does not exist: one writer per directory
// is then the user's to keep.
func flock(*os.File) error { return nil }
