// Package results owns what a run leaves behind: one SQLite database per
// results directory (results.db: runs, passes, one row per request, engine
// telemetry, decisions and events), its migrations, and the Parquet and CSV
// files exported from it. SCHEMA.md documents every table and column.
//
// Each table has one column list (columns.go's column type: runColumns,
// passColumns, requestColumns, telemetryColumns, decisionColumns,
// eventColumns, digestColumns), which names, types and maps each column to
// its Go field once; the table's INSERT, its reads and its Parquet schema
// derive from it. The migrations create the tables, and
// TestColumnTables_MatchTables holds the lists to them.
//
// One writer goroutine owns the write connection and commits request records
// in batched transactions; every other write is queued behind it, so a write
// made after Add sees the records added before it. Reads use their own
// connections and see what has been committed (WAL lets them run while the
// writer writes).
package results

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/extractbench/extractbench"
	_ "github.com/mattn/go-sqlite3" // the database/sql driver "sqlite3"
)

// DBName is the name of the SQLite database inside a results directory.
const DBName = "results.db"

// Defaults of the writer. A batch of a few hundred records commits in a few
// milliseconds; the interval bounds how much a crash can lose when records
// arrive slowly (one request at a time at the baseline).
const (
	DefaultBatchSize     = 500
	DefaultFlushInterval = 150 * time.Millisecond
	DefaultBusyTimeout   = 10 * time.Second
	queueLen             = 4096
)

// ErrClosed is returned by writes on a Store that has been closed.
var ErrClosed = errors.New("results store is closed")

// Store is an open results database. Its methods are safe for concurrent use.
type Store struct {
	path   string
	wdb    *sql.DB // one connection, used only by the writer goroutine
	reader         // the read queries, on their own connections (shared with Reader)

	batchSize int
	interval  time.Duration

	mu     sync.RWMutex // guards closed against sends on ops
	closed bool
	ops    chan op
	done   chan struct{} // closed when the writer has returned

	errMu sync.Mutex
	err   error // the first failed batch; sticky: records were lost

	// The checkpointer copies the WAL into the database off the writer
	// goroutine: every checkpointRecords records committed, the writer
	// signals checkpoint (never waiting), and the checkpointer, on a read
	// connection, runs a PASSIVE checkpoint while the writer goes on.
	checkpoint  chan struct{}
	uncheckpted int           // records committed since the last signal (writer goroutine only)
	ckptDone    chan struct{} // closed when the checkpointer has returned
	walLarge    atomic.Bool   // the WAL passed walRestartFrames: the writer checkpoints itself once

	secrets storeSecrets // replaced in every text written (SetSecrets)

	inserts requestInserts // the writer goroutine's prepared INSERTs
}

// op is one item of the writer's queue: a record to insert (fn and done nil),
// a flush (fn nil, done set) or a write to run in its own transaction.
type op struct {
	rec  extractbench.Record
	ctx  context.Context
	fn   func(ctx context.Context, tx *sql.Tx) error
	done chan error
}

// Open opens dir/results.db, creating dir and the database when missing,
// and brings its schema up to date. A database whose user_version is newer
// than this binary's migrations is refused.
func Open(ctx context.Context, dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create results dir %s: %w", dir, err)
	}
	path := filepath.Join(dir, DBName)
	wdb, err := openDB(path, "immediate")
	if err != nil {
		return nil, err
	}
	// One connection: SQLite has one writer anyway, and the writer goroutine
	// is its only user, so no write ever waits on busy_timeout in-process.
	wdb.SetMaxOpenConns(1)
	if err := migrate(ctx, wdb); err != nil {
		wdb.Close()
		return nil, fmt.Errorf("migrate %s: %w", path, err)
	}
	// WAL lets the readers read while the writer writes; Close leaves the
	// file in rollback mode again (leaveReadable).
	if _, err := wdb.ExecContext(ctx, `PRAGMA journal_mode = WAL`); err != nil {
		wdb.Close()
		return nil, fmt.Errorf("open %s: set WAL mode: %w", path, err)
	}
	// The checkpointer checkpoints instead of the writer's commits. Should
	// the connection ever be reopened, SQLite's default (a checkpoint in
	// the commit that passes 1,000 pages) comes back: slower, as safe.
	if _, err := wdb.ExecContext(ctx, `PRAGMA wal_autocheckpoint = 0`); err != nil {
		wdb.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	// Each multi-row INSERT of records keeps a statement journal (the pages
	// it changes, to undo it alone should a row fail its constraints); past
	// 64 KiB SQLite spills it to a temporary file, written and thrown away
	// at every statement: as many bytes as the WAL itself, a fifth of the
	// writer's CPU. In memory it holds at most the pages one statement of
	// insertRows records touches. Set after the migrations, whose
	// statements may touch a whole table.
	if _, err := wdb.ExecContext(ctx, `PRAGMA temp_store = MEMORY`); err != nil {
		wdb.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	rdb, err := openDB(path, "deferred")
	if err != nil {
		wdb.Close()
		return nil, err
	}
	rdb.SetMaxOpenConns(4)
	s := &Store{
		path:       path,
		wdb:        wdb,
		reader:     reader{rdb: rdb},
		batchSize:  DefaultBatchSize,
		interval:   DefaultFlushInterval,
		ops:        make(chan op, queueLen),
		done:       make(chan struct{}),
		checkpoint: make(chan struct{}, 1),
		ckptDone:   make(chan struct{}),
	}
	go s.run()
	go s.checkpointer()
	return s, nil
}

// openDB opens path with a busy timeout and the given BEGIN behaviour, in
// the journal mode the file is in (Open sets WAL for a writer):
// "immediate" for the writer, so that a write transaction takes the lock when
// it starts instead of failing with SQLITE_BUSY when it upgrades; "deferred"
// for readers, which must never take the write lock.
func openDB(path, txlock string) (*sql.DB, error) {
	q := url.Values{}
	q.Set("_synchronous", "NORMAL") // durable at each checkpoint; a power cut loses at most the last commits
	q.Set("_busy_timeout", fmt.Sprint(DefaultBusyTimeout.Milliseconds()))
	q.Set("_txlock", txlock)
	db, err := sql.Open("sqlite3", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return db, nil
}

// Path returns the path of the database file.
func (s *Store) Path() string { return s.path }

// Add hands rec to the writer goroutine and returns; it blocks only while the
// writer's queue (a few thousand records) is full. The record is committed
// within DefaultFlushInterval or when DefaultBatchSize records are pending. A
// (pass, doc) already stored is left as it is: the first row stays. Errors
// come back from Flush and Close. Add on a closed store drops the record and
// keeps ErrClosed for Flush to return.
func (s *Store) Add(rec extractbench.Record) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		s.setErr(fmt.Errorf("add record %s: %w", rec.DocID, ErrClosed))
		return
	}
	if rec.Failure != extractbench.None && rec.Failure.Index() < 0 {
		// requests.failure has no CHECK (migration 12): the classes are extractbench.Failures.
		s.setErr(fmt.Errorf("add record %s: failure class %q is not one of extractbench.Failures %v", rec.DocID, rec.Failure, extractbench.Failures))
		return
	}
	s.ops <- op{rec: rec}
}

// Flush waits until every record handed to Add before it has been committed,
// and returns the first write error the store has met, if any. The error is
// sticky: once a batch failed, records were lost and every later Flush and
// Close says so. A canceled ctx returns ctx.Err() without waiting; on Ctrl-C
// flush with context.WithoutCancel(ctx), or just Close.
func (s *Store) Flush(ctx context.Context) error {
	return s.enqueue(ctx, op{ctx: ctx})
}

// Close flushes, stops the writer, waits for it and closes the database,
// leaving it readable without write access (leaveReadable). It returns the
// first write error, like Flush. Closing twice is harmless.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		<-s.done
		return s.firstErr()
	}
	s.closed = true
	close(s.ops)
	s.mu.Unlock()
	<-s.done
	close(s.checkpoint) // the writer, its only sender, has returned
	<-s.ckptDone
	err := s.firstErr()
	for _, st := range []*sql.Stmt{s.inserts.many, s.inserts.one} {
		if st != nil {
			st.Close()
		}
	}
	s.inserts.fields.close()
	if cerr := s.rdb.Close(); cerr != nil {
		err = errors.Join(err, fmt.Errorf("close %s readers: %w", s.path, cerr))
	}
	if cerr := leaveReadable(context.Background(), s.wdb); cerr != nil {
		err = errors.Join(err, fmt.Errorf("close %s: %w", s.path, cerr))
	}
	if cerr := s.wdb.Close(); cerr != nil {
		err = errors.Join(err, fmt.Errorf("close %s: %w", s.path, cerr))
	}
	return err
}

// write runs fn in its own transaction on the writer goroutine, after every
// record added before it has been committed, and waits for it.
func (s *Store) write(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	return s.enqueue(ctx, op{ctx: ctx, fn: fn})
}

// enqueue sends o to the writer with a reply channel and waits for the reply.
func (s *Store) enqueue(ctx context.Context, o op) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	o.done = make(chan error, 1)
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return ErrClosed
	}
	select {
	case s.ops <- o:
	case <-ctx.Done():
		s.mu.RUnlock()
		return ctx.Err()
	}
	s.mu.RUnlock()
	select {
	case err := <-o.done:
		return err
	case <-ctx.Done():
		// The writer skips an op whose ctx is done, or finishes it; either way
		// the reply channel is buffered, so it never blocks on us.
		return ctx.Err()
	}
}

// run is the writer goroutine. It batches records and commits them when the
// batch is full, when the interval since the first pending record passed, or
// before any other op, so that ops see every record queued before them.
func (s *Store) run() {
	defer close(s.done)
	var pending []extractbench.Record
	timer := time.NewTimer(s.interval)
	timer.Stop()
	commit := func() {
		timer.Stop()
		if len(pending) == 0 {
			return
		}
		if err := s.insertRecords(pending); err != nil {
			s.setErr(err)
		} else if s.walLarge.Swap(false) {
			// Right after its own commit no frame is newer than the
			// checkpoint, so the next transaction starts the WAL over.
			_, _ = s.wdb.Exec(`PRAGMA wal_checkpoint(PASSIVE)`)
		} else if s.uncheckpted += len(pending); s.uncheckpted >= checkpointRecords {
			s.uncheckpted = 0
			select {
			case s.checkpoint <- struct{}{}:
			default: // one is running or pending: it will copy these too
			}
		}
		clear(pending) // drop the outputs' strings for the GC
		pending = pending[:0]
	}
	for {
		select {
		case o, ok := <-s.ops:
			switch {
			case !ok:
				commit()
				return
			case o.done == nil:
				pending = append(pending, o.rec)
				if len(pending) >= s.batchSize {
					commit()
				} else if len(pending) == 1 {
					timer.Reset(s.interval)
				}
			case o.fn == nil:
				commit()
				o.done <- s.firstErr()
			default:
				commit()
				o.done <- s.exec(o)
			}
		case <-timer.C:
			commit()
		}
	}
}

// checkpointRecords is how many records the writer commits between two
// checkpoints: about SQLite's default of 1,000 WAL pages (a request row
// and its index entries take a third to half of a page).
const checkpointRecords = 2000

// walRestartFrames is the WAL size, in frames (pages), past which the
// writer runs one checkpoint itself, after a commit, as SQLite's own
// autocheckpoint does: SQLite starts the WAL over only at a write that
// finds every frame checkpointed, which a checkpoint beside a writer that
// never pauses does not achieve, so the WAL would grow while records keep
// arriving without a break.
const walRestartFrames = 64 * 1024

// checkpointer runs a checkpoint each time the writer signals, until Close.
// A checkpoint copies committed frames of the WAL into the database; it
// changes nothing that a crash could lose (the frames stay in the WAL
// until copied), so it runs on a read connection beside the writer. A
// failed checkpoint is retried at the next signal: the WAL keeps the data.
func (s *Store) checkpointer() {
	defer close(s.ckptDone)
	ctx := context.Background()
	for range s.checkpoint {
		var busy, frames, copied int
		if err := s.rdb.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &frames, &copied); err != nil {
			continue
		}
		if frames >= walRestartFrames {
			s.walLarge.Store(true)
		}
	}
}

// exec runs one queued write in its own transaction.
func (s *Store) exec(o op) (err error) {
	if err := o.ctx.Err(); err != nil {
		return err
	}
	tx, err := s.wdb.BeginTx(o.ctx, nil)
	if err != nil {
		return fmt.Errorf("begin write: %w", err)
	}
	if err := o.fn(o.ctx, tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit write: %w", err)
	}
	return nil
}

func (s *Store) setErr(err error) {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	if s.err == nil {
		s.err = err
	}
}

func (s *Store) firstErr() error {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.err
}
