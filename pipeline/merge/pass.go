package merge

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/pipeline/passrow"
	"github.com/extractbench/extractbench/pipeline/telemetry"
	"github.com/extractbench/extractbench/results"
)

// shardPass is one shard's row of a pass being merged.
type shardPass struct {
	shard *mergeInput
	row   extractbench.Pass
}

// copyRows copies every pass's request rows and telemetry from each shard
// into the merged store, pass by pass (so that each merged pass's rows lie
// together, as a run writes them) and within a pass shard by shard in
// index order: a (pass, document) already copied from an earlier shard is a
// duplicate, counted and named (the first ones shard by shard, as they were
// found when the copy went shard by shard), never copied. dir holds the
// merged results.db.
func (mg *merger) copyRows(ctx context.Context, dir string, keys []extractbench.PassKey) error {
	cp, err := results.OpenCopier(ctx, dir)
	if err != nil {
		return err
	}
	defer cp.Close()
	examples := make([][]string, len(mg.shards)) // by shard, then pass
	var attached *mergeInput
	for _, key := range keys {
		for si, in := range mg.shards {
			if in != attached {
				if err := cp.Attach(ctx, in.rd); err != nil {
					return fmt.Errorf("read %s: %w", in.dir, err)
				}
				attached = in
			}
			sk := key
			sk.RunID = in.run.RunID
			res, err := cp.CopyPass(ctx, sk, key, in.offset, maxDuplicateExamples)
			if err != nil {
				return fmt.Errorf("copy %s: %w", in.dir, err)
			}
			in.info.Rows += res.Copied
			in.info.Duplicates += res.Duplicates
			mg.sum.Rows += res.Copied
			mg.sum.Duplicates += res.Duplicates
			for _, id := range res.Examples {
				examples[si] = append(examples[si], fmt.Sprintf("%s/%s/level=%d/rep=%d doc %s (again in %s)", key.Variant, key.Mode, key.Level, key.Repetition, id, in.dir))
			}
		}
	}
	for _, ex := range examples {
		mg.sum.DuplicateRows = append(mg.sum.DuplicateRows, ex[:min(len(ex), maxDuplicateExamples-len(mg.sum.DuplicateRows))]...)
	}
	return nil
}

// mergePasses writes the row of each merged pass, in keys' order (a pass
// is judged against the baseline passes written before it). The passes'
// rows are tallied in Go (passrow.Tallies: ReadPass's figures, bit for
// bit) from the one read that exports them to requests.parquet, written
// into dir (the merged results.db's) until build moves it beside the db:
// the rows are read once for both.
func (mg *merger) mergePasses(ctx context.Context, dir string, keys []extractbench.PassKey) error {
	tallies := mg.acct.NewTallies(mg.endpoints)
	if err := mg.store.ExportRequests(ctx, filepath.Join(dir, results.RequestsParquet), tallies.Add); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	if err := tallies.Close(); err != nil {
		return fmt.Errorf("merge: read back the merged passes: %w", err)
	}
	for _, key := range keys {
		if _, err := mg.mergePass(ctx, key, mg.rowsOf(key), tallies.Pass(key)); err != nil {
			return err
		}
	}
	return nil
}

// mergePass writes the row of one merged pass, computed by the runner's own
// passrow.Account.Row from the tally of the pass's merged request rows.
func (mg *merger) mergePass(ctx context.Context, key extractbench.PassKey, rows []shardPass, tally *passrow.Tally) (extractbench.Pass, error) {
	first := rows[0].row
	complete := tally.Docs() == int64(mg.expectedDocs(key))
	p := mg.acct.Row(key, first.Phase, 0, key.Level, tally, mergedTelemetry(rows), first.BatchTransport, complete, nil)
	p.Attempt, p.RetryOf = first.Attempt, first.RetryOf
	p.SentConcurrency = extractbench.SentConcurrency(key.Mode, key.Level, mg.acct.Proto.Sweep.Concurrency, len(rows), tally.MaxInFlight()) // each shard keeps level in flight
	mergeClientFigures(&p, rows)
	p.CacheReset = mergedCacheReset(rows)
	p.OrderSeed = sharedOrderSeed(rows)
	if complete {
		mg.acct.Judge(&p) // again: the shards' client self-checks are part of the verdict
	}
	if err := mg.store.PutPass(ctx, p); err != nil {
		return extractbench.Pass{}, fmt.Errorf("merge: write merged pass %s: %w", key, err)
	}
	return p, nil
}

// sharedOrderSeed is a merged pass's order_seed: its shards'. Shards of one
// run share the protocol, so each sent its own part of the corpus in the
// permutation of the same seed, or all went in corpus order (nil); shards
// that disagree (which one fingerprint rules out) leave it nil.
func sharedOrderSeed(rows []shardPass) *int64 {
	seed := rows[0].row.OrderSeed
	for _, sp := range rows[1:] {
		if s := sp.row.OrderSeed; seed == nil || s == nil || *s != *seed {
			return nil
		}
	}
	return seed
}

// maxDuplicateExamples is how many duplicate rows a merge names.
const maxDuplicateExamples = 20

// expectedDocs is how many documents a complete merged pass holds: the
// whole corpus, or in a context sweep the level's length class.
func (mg *merger) expectedDocs(key extractbench.PassKey) int {
	if key.Mode == extractbench.ModeContext {
		return mg.manifest.Corpus.Classes[extractbench.LengthClassOf(key.Level)]
	}
	return mg.manifest.Corpus.Count
}

// mergedTelemetry is the engine's side of a merged pass, from the shards'
// rows of it: peaks (running, waiting, KV cache, memory) and counter
// growth (preemptions, graph captures) are the highest any shard observed,
// since shards that share an engine each see all of its load; the engine
// queue mean is the shards' means weighted by their documents.
func mergedTelemetry(rows []shardPass) telemetry.Telemetry {
	var t telemetry.Telemetry
	hi := func(dst **float64, v *int64) {
		if v == nil {
			return
		}
		f := float64(*v)
		if *dst == nil || f > **dst {
			*dst = &f
		}
	}
	var qSum, qCount float64
	for _, sp := range rows {
		p := sp.row
		hi(&t.MaxRunning, p.ObservedMaxRunning)
		hi(&t.MaxWaiting, p.ObservedMaxWaiting)
		hi(&t.PreemptionsDelta, p.Preemptions)
		hi(&t.CapturesDelta, p.EngineCaptures)
		hi(&t.PeakGPUMemUsed, p.PeakGPUMemBytes)
		hi(&t.PeakTorchAllocated, p.PeakTorchAllocatedBytes)
		hi(&t.PeakTorchReserved, p.PeakTorchReservedBytes)
		if p.PeakKVUsage != nil && (t.PeakKVUsage == nil || *p.PeakKVUsage > *t.PeakKVUsage) {
			t.PeakKVUsage = ptr(*p.PeakKVUsage)
		}
		if p.TelemetrySamples != nil {
			t.Configured = true
			t.ActiveScrapes += int(*p.TelemetrySamples)
		}
		if p.EngineQueueMeanNS != nil && p.Docs > 0 {
			qSum += float64(*p.EngineQueueMeanNS) / 1e9 * float64(p.Docs)
			qCount += float64(p.Docs)
		}
	}
	if qCount > 0 {
		t.QueueTimeSumDelta, t.QueueTimeCountDelta = &qSum, &qCount
	}
	return t
}

// mergeClientFigures sets the client's self-check of a merged pass from
// the shards' (each measured by its own process): the highest client delay
// p99 and CPU share, the CPU time summed, and client-bound when any shard
// was.
func mergeClientFigures(p *extractbench.Pass, rows []shardPass) {
	for _, sp := range rows {
		r := sp.row
		if r.ClientDelayP99NS != nil && (p.ClientDelayP99NS == nil || *r.ClientDelayP99NS > *p.ClientDelayP99NS) {
			p.ClientDelayP99NS = ptr(*r.ClientDelayP99NS)
		}
		if r.ClientCPUNS != nil {
			p.ClientCPUNS = ptr(*r.ClientCPUNS + orZero(p.ClientCPUNS))
		}
		if r.ClientCPUShare != nil && (p.ClientCPUShare == nil || *r.ClientCPUShare > *p.ClientCPUShare) {
			p.ClientCPUShare = ptr(*r.ClientCPUShare)
		}
		if r.ClientBound != nil {
			p.ClientBound = ptr(*r.ClientBound || (p.ClientBound != nil && *p.ClientBound))
		}
	}
}

// mergedCacheReset is a merged pass's cache_reset: the shards' when they
// agree, else each distinct one, the first shard's first: a pass is reset
// only if every shard reset its engine before it.
func mergedCacheReset(rows []shardPass) string {
	var seen []string
	for _, sp := range rows {
		if c := sp.row.CacheReset; c != "" && !slices.Contains(seen, c) {
			seen = append(seen, c)
		}
	}
	return strings.Join(seen, "; ")
}

func ptr[T any](v T) *T { return &v }

func orZero[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// passKeys are the merged run's passes: every pass any shard has, the
// baseline passes first (later passes are judged against them), then by
// variant, mode, level and repetition.
func (mg *merger) passKeys() []extractbench.PassKey {
	type k struct {
		key      extractbench.PassKey
		baseline bool
	}
	seen := map[extractbench.PassKey]bool{}
	var keys []k
	for _, in := range mg.shards {
		for _, p := range in.passes {
			key := extractbench.PassKey{RunID: mg.sum.RunID, Variant: p.Variant, Mode: p.Mode, Level: p.Level, Repetition: p.Repetition}
			if !seen[key] {
				seen[key] = true
				keys = append(keys, k{key, p.Phase == extractbench.PhaseBaseline})
			}
		}
	}
	slices.SortFunc(keys, func(a, b k) int {
		if a.baseline != b.baseline {
			if a.baseline {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.key.Variant, b.key.Variant), cmp.Compare(a.key.Mode, b.key.Mode),
			cmp.Compare(a.key.Level, b.key.Level), cmp.Compare(a.key.Repetition, b.key.Repetition))
	})
	out := make([]extractbench.PassKey, len(keys))
	for i, x := range keys {
		out[i] = x.key
	}
	return out
}

// rowsOf are the shards' rows of the merged pass key, in shard order.
func (mg *merger) rowsOf(key extractbench.PassKey) []shardPass {
	var out []shardPass
	for _, in := range mg.shards {
		for _, p := range in.passes {
			if p.Variant == key.Variant && p.Mode == key.Mode && p.Level == key.Level && p.Repetition == key.Repetition {
				out = append(out, shardPass{shard: in, row: p})
			}
		}
	}
	return out
}

// endpoints are the replicas the shards' manifest lists for a variant (none
// for a variant of one URL: its records name it).
func (mg *merger) endpoints(variant string) []string {
	for _, v := range mg.manifest.Variants {
		if v.Name == variant {
			return v.Engine.Endpoints
		}
	}
	return nil
}
