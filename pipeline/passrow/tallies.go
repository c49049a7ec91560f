package passrow

import (
	"fmt"

	"github.com/extractbench/extractbench"
)

// Tallies is ReadPass for every pass of a store in one read of its rows:
// fed the measured rows as EachPassFigures reads them, in the order they
// were stored (results.Store.ExportRequests hands them over as it exports
// them), it tallies each pass as ReadPass does, bit for bit
// (TestTallies_IsReadPass). A pass's rows must lie in one stretch, as a
// merge copies them pass after pass: a pass is completed when the next
// one's rows begin, so that it holds one pass's requests at a time.
type Tallies struct {
	acct      *Account
	endpoints func(variant string) []string // the variant's replicas, as ReadPass's
	key       extractbench.PassKey
	cur       *Tally // the pass being read; nil before the first row
	done      map[extractbench.PassKey]*Tally
	err       error
}

// NewTallies is an empty Tallies; endpoints gives each variant's replicas.
func (a *Account) NewTallies(endpoints func(variant string) []string) *Tallies {
	return &Tallies{acct: a, endpoints: endpoints, done: map[extractbench.PassKey]*Tally{}}
}

// Add counts one record of its pass.
func (ts *Tallies) Add(r *extractbench.Record) {
	if key := extractbench.PassKeyOf(*r); ts.cur == nil || key != ts.key {
		ts.finish()
		if _, seen := ts.done[key]; seen && ts.err == nil {
			ts.err = fmt.Errorf("the rows of pass %s do not lie in one stretch", key)
		}
		ts.key, ts.cur = key, ts.acct.NewTally(ts.endpoints(key.Variant), 0)
	}
	ts.cur.Add(r)
}

// finish completes the pass being read, as ReadPass does.
func (ts *Tallies) finish() {
	if ts.cur == nil {
		return
	}
	ts.acct.completeRead(ts.key.Variant, ts.cur)
	ts.done[ts.key] = ts.cur
	ts.cur = nil
}

// Close completes the last pass once every row is fed; after it, Pass
// gives each pass's tally.
func (ts *Tallies) Close() error {
	ts.finish()
	return ts.err
}

// Pass is the tally of pass key: ReadPass's of a pass without rows when
// none was fed.
func (ts *Tallies) Pass(key extractbench.PassKey) *Tally {
	if t, ok := ts.done[key]; ok {
		return t
	}
	t := ts.acct.NewTally(ts.endpoints(key.Variant), 0)
	ts.acct.completeRead(key.Variant, t)
	return t
}
