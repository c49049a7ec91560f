package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xeipuuv/gojsonschema"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/pipeline/passrow"
	"github.com/extractbench/extractbench/pipeline/protocol"
	"github.com/extractbench/extractbench/pipeline/tokenizer"
	"github.com/extractbench/extractbench/results"
)

// runState is what every job of one run in progress shares: what
// preflight loaded (protocol, corpus, schema, manifest), the store, the
// run's id and clock, its log and the requests' interrupts. The jobs
// themselves are variantRun, passRun and engine.
type runState struct {
	proto       *protocol.Protocol
	store       *results.Store
	checked     *results.Run // the run -resume continues, checked before anything is written (checkResume)
	resumes     []int64      // run-clock instants at which this run was resumed (segment starts)
	opts        Options
	corpus      *corpus.Corpus
	readFailure docFault // the first document that could not be read back: the run stops
	schema      *gojsonschema.Schema
	evalOpts    eval.Options
	manifest    *extractbench.Manifest
	runID       string
	clock       extractbench.Clock
	progress    io.Writer // Options.Progress with the run's secrets redacted
	passNo      int       // passes started so far by this invocation, for the display
	simulated   bool
	intr        *interrupts         // the requests' context and the count in flight
	shard       *extractbench.Shard // the corpus's part this run measures; nil = all of it
	appendedTo  string              // the runs already in the directory, when -append added this one
	// responseFormat is the OpenAI response_format sent with every request
	// when the protocol asks for guided decoding; nil otherwise.
	responseFormat json.RawMessage
	// refusedUsage: the usages refused in each pass, for its event.
	refusedUsage refusedUsage

	secrets *results.Secrets // what the run never writes (protocol.Protocol.Secrets)
	// prompts count each variant's prompts with its tokenizer.json, for
	// the tokenizer drift (promptdrift.go); a variant without one is absent.
	prompts       map[string]*tokenizer.Prompt
	promptCounts  sync.Map     // variant + "\x00" + document id → its expected count (expectPromptTokens)
	promptCounted atomic.Int64 // entries stored in promptCounts
}

// account is what builds the run's pass rows (passrow): its protocol, its
// store and the segments its resumes cut.
func (rs *runState) account() *passrow.Account {
	return &passrow.Account{Proto: rs.proto, Store: rs.store, Resumes: rs.resumes}
}

// passKey names a pass in the store.
func (rs *runState) passKey(v *extractbench.Variant, level, rep int) extractbench.PassKey {
	return extractbench.PassKey{RunID: rs.runID, Variant: v.Name, Mode: rs.proto.Sweep.Mode, Level: level, Repetition: rep}
}

func (rs *runState) event(ctx context.Context, variant, kind string, valueNS int64, detail string) {
	if rs.store == nil {
		return // checkResume's engine check, which writes nothing
	}
	_ = rs.store.AddEvent(ctx, results.Event{RunID: rs.runID, Variant: variant, AtMS: time.Now().UnixMilli(), Kind: kind, ValueNS: valueNS, Detail: detail})
}

// logf writes one line of the run's log through its display.
func (rs *runState) logf(format string, args ...any) {
	rs.display().Log(rs.progress, fmt.Sprintf(format+"\n", args...))
}

// display is the run's Progress; a runState made by a test has none.
func (rs *runState) display() Progress {
	if rs.opts.Display == nil {
		return plainLog{}
	}
	return rs.opts.Display
}

// decision records a decision of the sweep and prints it.
func (rs *runState) decision(ctx context.Context, variant, kind string, from, to int, reason string) {
	rs.logf("decision: %s %s level %d → %d: %s", variant, kind, from, to, reason)
	if err := rs.store.AddDecision(ctx, results.Decision{RunID: rs.runID, Variant: variant, AtMS: time.Now().UnixMilli(),
		Kind: kind, FromLevel: from, ToLevel: to, Reason: reason}); err != nil {
		rs.logf("warning: record decision: %v", err)
	}
}
