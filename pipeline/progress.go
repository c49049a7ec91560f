package pipeline

import (
	"io"

	"github.com/extractbench/extractbench"
)

// Progress shows a run as it goes: its log lines and each pass while it
// runs. pipeline/progress draws it on a terminal or a log; cmd/extractbench
// wires it in (Options.Display). Every call writes to w, the run's
// Options.Progress with its secrets redacted.
type Progress interface {
	// Log writes one line of the run's log (it ends in a newline).
	Log(w io.Writer, line string)
	// Pass starts showing pass p, until its PassProgress is finished.
	Pass(w io.Writer, p PassStart) PassProgress
}

// PassProgress follows one pass on a Progress.
type PassProgress interface {
	// Add counts one measured request of the pass, as it is kept.
	Add(rec extractbench.Record)
	// Finish ends the pass; complete says whether every document was sent.
	Finish(complete bool)
}

// PassStart is what a Progress is told of a pass as it starts.
type PassStart struct {
	Place, Planned          int // its place among the run's passes, and how many are planned
	Variant                 string
	Mode                    extractbench.Mode
	Phase                   string // extractbench.PhaseBaseline, PhaseSweep, ...
	Level                   int
	Concurrency             int // a context sweep's concurrency
	Repetition, Repetitions int
	Total                   int // the pass's documents
	Already                 int // of them, those recorded before this invocation (resume)
}

// plainLog is the Progress of a run given none: its log lines as they
// are, no pass shown.
type plainLog struct{}

func (plainLog) Log(w io.Writer, line string)           { _, _ = io.WriteString(w, line) }
func (plainLog) Pass(io.Writer, PassStart) PassProgress { return noPass{} }

// noPass follows a pass that is not shown.
type noPass struct{}

func (noPass) Add(extractbench.Record) {}
func (noPass) Finish(bool)             {}
