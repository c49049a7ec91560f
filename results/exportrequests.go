package results

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"slices"

	"github.com/extractbench/extractbench"
)

// ExportRequests writes the store's requests.parquet to path, the file
// Export writes from the same rows, and hands fn each measured row as
// EachPassFigures reads it, in the order the rows were stored, from that
// one read of the rows: a merge tallies its passes from the read that
// exports them (SQLite's reads are most of both). The caller exports the
// other files after (ExportBoundedAfterRequests); the store's run row must
// be written already (the file names its run's context). Its GC goal is
// ExportBounded's.
func (s *Store) ExportRequests(ctx context.Context, path string, fn func(*extractbench.Record)) error {
	if err := s.Flush(ctx); err != nil {
		return fmt.Errorf("export %s: %w", path, err)
	}
	defer debug.SetGCPercent(debug.SetGCPercent(exportGCPercent))
	// One transaction: the requests and their fields read one snapshot.
	tx, err := s.rdb.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("export %s: %w", path, err)
	}
	defer tx.Rollback()
	fields, err := openFieldCursor(ctx, tx, measured)
	if err != nil {
		return fmt.Errorf("export %s: read request fields: %w", path, err)
	}
	defer fields.close()
	declared, err := declaredRuns(ctx, tx)
	if err != nil {
		return fmt.Errorf("export %s: %w", path, err)
	}
	t := exportTables()[0] // requests.parquet
	t.visit = newFigureRows(fields, declared, fn).visit
	if err := writeAtomic(path, func(w io.Writer) error { return writeParquet(ctx, tx, w, t) }); err != nil {
		return fmt.Errorf("export %s: %w", path, err)
	}
	return nil
}

// figureRows makes records of the requests rows the export scans (one
// cell per requestColumns column, in table order), as EachPassFigures
// reads them: figureColumns loaded, their field scores from a cursor over
// the measured rows' fields; unmeasured rows are passed over.
type figureRows struct {
	cols     columns[extractbench.Record]
	at       []int // each of cols' cell
	kindAt   int   // transport_kind's cell
	fields   *fieldCursor
	declared map[string]bool
	fn       func(*extractbench.Record)
}

func newFigureRows(fields *fieldCursor, declared map[string]bool, fn func(*extractbench.Record)) *figureRows {
	f := &figureRows{fields: fields, declared: declared, fn: fn}
	for i, c := range requestColumns {
		switch {
		case c.name == "transport_kind":
			f.kindAt = i
		case c.load != nil && slices.Contains(figureColumns, c.name):
			f.cols = append(f.cols, c)
			f.at = append(f.at, i)
		}
	}
	return f
}

func (f *figureRows) visit(cells []cell) error {
	if c := &cells[f.kindAt]; c.valid && !extractbench.TransportKind(c.s).Measured() {
		return nil
	}
	var rec extractbench.Record
	for i, c := range f.cols {
		c.load(&rec, &cells[f.at[i]])
	}
	var err error
	if rec.Score.Fields, err = f.fields.fieldsOf(&rec); err != nil {
		return fmt.Errorf("read request fields: %w", err)
	}
	rec.Score.Declared = f.declared[rec.RunID] && rec.Score.Fields != nil
	f.fn(&rec)
	return nil
}
