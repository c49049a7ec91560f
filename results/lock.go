package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// LockName is the lock file of a results directory. Whoever writes the
// directory (a run, a resume, an export) holds an exclusive flock on it for
// as long as it writes, and keeps its LockHolder in it; the kernel releases
// the flock when the holder's process ends, however it ends. It lies beside
// the directory's results.db where that really is (symbolic links
// followed): two directories sharing one database share its lock.
const LockName = ".extractbench.lock"

// LockHolder says who holds (or last held) a results directory's lock.
type LockHolder struct {
	PID     int    `json:"pid"`
	Host    string `json:"host"`
	Command string `json:"command"`  // what the holder is doing: "run", "run -resume", "export"
	SinceMS int64  `json:"since_ms"` // Unix ms when it took the lock
}

func (h LockHolder) String() string {
	return fmt.Sprintf("pid %d on %s (%s, since %s)", h.PID, h.Host, h.Command, time.UnixMilli(h.SinceMS).UTC().Format(time.RFC3339))
}

// LockedError is the error LockDir returns when another process holds the
// directory: two writers would measure the same passes under doubled load.
type LockedError struct {
	Dir    string
	DB     string     // the database's real path, when Dir's results.db is a link to another directory's
	Holder LockHolder // zero when the holder's file could not be read
}

func (e *LockedError) Error() string {
	who := "another process"
	if e.Holder.PID != 0 {
		who = e.Holder.String()
	}
	shared := ""
	if e.DB != "" {
		shared = fmt.Sprintf(" (its %s is %s)", DBName, e.DB)
	}
	return fmt.Sprintf("results directory %s%s is in use by %s: one writer per database; wait for it to end, or use another -out directory", e.Dir, shared, who)
}

// Lock is a held results-directory lock.
type Lock struct {
	f *os.File
	// Stale is the holder a previous process left in the lock file without
	// releasing it (killed, crashed): its lock was taken over. Nil when the
	// last holder released the lock cleanly or there was none.
	Stale *LockHolder
}

// LockDir takes the lock of dir's database without waiting, creating the
// lock file when missing; command says what the holder does. The lock is
// the database's, not the directory's: a results.db that is a symbolic link
// (or lies in a linked directory) is locked where it really is (lockPath),
// so two directories sharing one database never have two writers. It
// returns *LockedError when another process holds it. Release it with
// Unlock.
func LockDir(dir, command string) (*Lock, error) {
	path, db, err := lockPath(dir)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", path, err)
	}
	if err := flock(f); err != nil {
		defer f.Close()
		if errors.Is(err, errLocked) {
			le := &LockedError{Dir: dir}
			if abs, _ := filepath.Abs(filepath.Join(dir, DBName)); abs != db {
				le.DB = db
			}
			if h, _ := readHolder(f); h != nil {
				le.Holder = *h
			}
			return nil, le
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	l := &Lock{f: f}
	l.Stale, _ = readHolder(f) // a holder still written but not holding: it died
	host, _ := os.Hostname()
	b, _ := json.Marshal(LockHolder{PID: os.Getpid(), Host: host, Command: command, SinceMS: time.Now().UnixMilli()})
	err = f.Truncate(0)
	if err == nil {
		_, err = f.WriteAt(append(b, '\n'), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("write lock %s: %w", path, err)
	}
	_ = f.Sync()
	return l, nil
}

// Unlock empties the lock file (so the next holder knows this one ended
// cleanly) and releases the lock. Unlocking twice, or a nil lock, is harmless.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Truncate(0)
	if cerr := l.f.Close(); err == nil { // closing releases the flock
		err = cerr
	}
	l.f = nil
	return err
}

// maxLinks bounds the symbolic links lockPath follows, as the kernel's
// ELOOP does.
const maxLinks = 40

// lockPath is the lock file of dir's database and that database's real
// path: its directory's LockName when it is named results.db, else
// ".NAME.lock" beside it. The database need not exist yet (a new run, or a
// dangling link that SQLite will create the target of): its directory is
// resolved, and a link is followed to where it points.
func lockPath(dir string) (lock, db string, err error) {
	p := filepath.Join(dir, DBName)
	for range maxLinks {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			return lockBeside(real)
		}
		info, lerr := os.Lstat(p)
		switch {
		case lerr == nil && info.Mode()&fs.ModeSymlink != 0: // a link to nothing yet
			target, err := os.Readlink(p)
			if err != nil {
				return "", "", err
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(p), target)
			}
			p = target
			continue
		case !errors.Is(lerr, fs.ErrNotExist):
			return "", "", err
		}
		d, err := filepath.EvalSymlinks(filepath.Dir(p)) // no database yet
		if err != nil {
			return "", "", err
		}
		return lockBeside(filepath.Join(d, filepath.Base(p)))
	}
	return "", "", fmt.Errorf("%s: more than %d symbolic links", filepath.Join(dir, DBName), maxLinks)
}

// lockBeside is the lock file of the database at db, and db made absolute.
func lockBeside(db string) (lock, abs string, err error) {
	if abs, err = filepath.Abs(db); err != nil {
		return "", "", err
	}
	if filepath.Base(abs) == DBName {
		return filepath.Join(filepath.Dir(abs), LockName), abs, nil
	}
	return filepath.Join(filepath.Dir(abs), "."+filepath.Base(abs)+".lock"), abs, nil
}

func readHolder(f *os.File) (*LockHolder, error) {
	b, err := io.ReadAll(io.NewSectionReader(f, 0, 1<<16))
	if err != nil || strings.TrimSpace(string(b)) == "" {
		return nil, err
	}
	var h LockHolder
	if err := json.Unmarshal(b, &h); err != nil {
		return nil, err
	}
	return &h, nil
}
