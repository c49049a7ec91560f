package merge

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results"
)

// maxAuditExamples is how many rows a refused shard's message names per
// pass and problem.
const maxAuditExamples = 10

// TamperedError is a merge refused because a shard's rows are not what its
// run left: rows deleted, added, edited, or of documents outside the shard.
// Nothing was written. It is a ConfigError (exit 2): a bad input.
type TamperedError struct {
	Shards []TamperedShard
}

// TamperedShard is one refused shard and what is wrong with each pass.
type TamperedShard struct {
	Shard    extractbench.Shard
	Dir      string
	RunID    string
	Problems []string // "variant/mode/level=L/rep=R: what is wrong", one per pass
}

func (e *TamperedError) Error() string {
	var b strings.Builder
	b.WriteString("merge: refused, nothing was written: ")
	for i, s := range e.Shards {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "shard %s in %s (run %s) does not hold what its run left:", s.Shard, s.Dir, s.RunID)
		for _, p := range s.Problems {
			b.WriteString("\n  " + p)
		}
	}
	b.WriteString("\nmeasure the shard again (a new -out, or its untouched copy), or merge without it (the merge is then incomplete)")
	return b.String()
}

// audit checks every shard's request rows against what its run left,
// before anything is written: each pass against its digest (the run's
// record of its rows as it ended: count and SHA-256, of its requests rows
// and of their request_fields rows), every row's document
// against the shard, a complete pass against the shard's documents (each
// once), a pass without a digest against its passes row, and every row's
// verdict against its scores. A shard without digests (written before
// them, or killed mid-run) is named on Progress: an edited row cannot be
// told there; so is one whose digests do not cover its request_fields
// rows (sealed before schema version 17). Any problem refuses the merge
// (TamperedError).
func (mg *merger) audit(ctx context.Context) error {
	var bad []TamperedShard
	for _, in := range mg.shards {
		problems, sealed, fieldsSealed, err := mg.auditShard(ctx, in)
		if err != nil {
			return fmt.Errorf("merge: check %s: %w", in.dir, err)
		}
		switch {
		case len(problems) > 0:
			bad = append(bad, TamperedShard{Shard: *in.manifest.Shard, Dir: in.dir, RunID: in.run.RunID, Problems: problems})
		case !sealed:
			why := "its run was written by an extractbench without them"
			switch {
			case in.run.Status == results.RunRunning:
				why = "its run never ended (killed, or still running)"
			case in.rd.RecordsDigests():
				why = "its run ended and was written by an extractbench that records them: they were removed after it ended"
			}
			note := fmt.Sprintf("shard %s in %s has no digest of its rows (%s): its rows were checked against its passes and its shard, but an edited row cannot be told", in.manifest.Shard, in.dir, why)
			mg.sum.Unsealed = append(mg.sum.Unsealed, note)
			fmt.Fprintln(mg.opts.Progress, "merge: "+note)
		default:
			fmt.Fprintf(mg.opts.Progress, "merge: shard %s in %s: every pass's rows match the digest its run left\n", in.manifest.Shard, in.dir)
			if !fieldsSealed {
				note := fmt.Sprintf("shard %s in %s has no digest of its request_fields rows (its run was sealed by an extractbench before them, or they were removed since): its requests rows were checked against their digest, but an edited field row cannot be told", in.manifest.Shard, in.dir)
				mg.sum.Unsealed = append(mg.sum.Unsealed, note)
				fmt.Fprintln(mg.opts.Progress, "merge: "+note)
			}
		}
	}
	if len(bad) > 0 {
		return &ConfigError{&TamperedError{Shards: bad}}
	}
	return nil
}

// auditShard returns what is wrong with one shard's passes, one line per
// pass, whether it has digests, and whether they cover its request_fields
// rows too (a shard sealed before schema version 17: not).
func (mg *merger) auditShard(ctx context.Context, in *mergeInput) (problems []string, sealed, fieldsSealed bool, err error) {
	digests, err := in.rd.Digests(ctx, in.run.RunID)
	if err != nil {
		return nil, false, false, err
	}
	sealed, fieldsSealed = len(digests) > 0, true
	for _, d := range digests {
		fieldsSealed = fieldsSealed && d.CoversFields()
	}
	for _, p := range in.passes {
		key := extractbench.PassKey{RunID: in.run.RunID, Variant: p.Variant, Mode: p.Mode, Level: p.Level, Repetition: p.Repetition}
		d, ok := digests[key]
		delete(digests, key)
		what, err := auditPass(ctx, in, p, key, d, ok, sealed)
		if err != nil {
			return nil, sealed, fieldsSealed, err
		}
		if len(what) > 0 {
			problems = append(problems, fmt.Sprintf("%s/%s/level=%d/rep=%d: %s", p.Variant, p.Mode, p.Level, p.Repetition, strings.Join(what, "; ")))
		}
	}
	gone := slices.SortedFunc(maps.Values(digests), func(a, b results.Digest) int {
		return cmp.Or(cmp.Compare(a.Key.Variant, b.Key.Variant), cmp.Compare(a.Key.Mode, b.Key.Mode),
			cmp.Compare(a.Key.Level, b.Key.Level), cmp.Compare(a.Key.Repetition, b.Key.Repetition))
	})
	for _, d := range gone {
		problems = append(problems, fmt.Sprintf("%s/%s/level=%d/rep=%d: its run left %s (its digest), but the shard no longer has the pass",
			d.Key.Variant, d.Key.Mode, d.Key.Level, d.Key.Repetition, rowCount(d.Rows)))
	}
	return problems, sealed, fieldsSealed, nil
}

// auditPass is what is wrong with one pass of a shard, against its digest
// d (hasDigest: the run left one) and its passes row p.
func auditPass(ctx context.Context, in *mergeInput, p extractbench.Pass, key extractbench.PassKey, d results.Digest, hasDigest, sealed bool) ([]string, error) {
	sh := *in.manifest.Shard
	a, err := in.rd.AuditPass(ctx, key, d.Columns, sh.Holds, maxAuditExamples)
	if err != nil {
		return nil, err
	}
	what := rowsProblems(in, p, a, d, hasDigest, sealed)
	if len(what) > 0 && p.Mode != extractbench.ModeContext { // name the rows from the shard's other passes
		missing, lone, err := in.rd.PassDocsDiff(ctx, key, maxAuditExamples)
		if err != nil {
			return nil, err
		}
		if len(missing) > 0 {
			what = append(what, "no row for "+strings.Join(missing, ", ")+" (documents of its other passes)")
		}
		if len(lone) > 0 {
			what = append(what, "a row for "+strings.Join(lone, ", ")+", which no other pass of the shard has")
		}
	}
	if a.Foreign > 0 {
		what = append(what, fmt.Sprintf("%s of documents outside shard %s (%s): %s", rowCount(a.Foreign), sh, extractbench.ShardHash, strings.Join(a.ForeignIDs, ", ")))
	}
	if a.Contradicted > 0 {
		what = append(what, fmt.Sprintf("%s whose verdict contradicts their scores: %s", rowCount(a.Contradicted), strings.Join(a.ContradictedRows, "; ")))
	}
	if hasDigest && d.CoversFields() {
		fa, err := in.rd.AuditFields(ctx, key, d.FieldColumns)
		if err != nil {
			return nil, err
		}
		what = append(what, fieldProblems(fa, d)...)
	}
	return what, nil
}

// fieldProblems compares a pass's request_fields rows (fa) with what its
// digest d recorded of them, the table named in each line.
func fieldProblems(fa results.FieldAudit, d results.Digest) []string {
	switch {
	case len(fa.MissingColumns) > 0:
		return []string{fmt.Sprintf("its digest covers request_fields columns %s, which its request_fields table lacks", strings.Join(fa.MissingColumns, ", "))}
	case fa.Rows != d.FieldRows:
		return []string{fmt.Sprintf("request_fields: %s, but its run left %d (its digest)", rowCount(fa.Rows), d.FieldRows)}
	case fa.SHA256 != d.FieldSHA256:
		return []string{fmt.Sprintf("request_fields: %s, as its run left, but their content differs from its digest: a field row was edited since the run ended", rowCount(fa.Rows))}
	}
	return nil
}

// rowsProblems compares a pass's rows (a) with what its run left: its
// digest, its passes row, and for a complete pass the shard's documents.
func rowsProblems(in *mergeInput, p extractbench.Pass, a results.PassAudit, d results.Digest, hasDigest, sealed bool) []string {
	var what []string
	switch {
	case sealed && !hasDigest:
		what = append(what, fmt.Sprintf("%s, and no digest: the pass was added after the shard's run ended", rowCount(a.Rows)))
	case hasDigest && len(a.MissingColumns) > 0:
		what = append(what, fmt.Sprintf("its digest covers columns %s, which its requests table lacks", strings.Join(a.MissingColumns, ", ")))
	case hasDigest && a.Rows != d.Rows:
		what = append(what, fmt.Sprintf("%s, but its run left %d (its digest)", rowCount(a.Rows), d.Rows))
	case hasDigest && a.SHA256 != d.SHA256:
		what = append(what, fmt.Sprintf("%s, as its run left, but their content differs from its digest: a row was edited since the run ended", rowCount(a.Rows)))
	case !hasDigest && (a.Rows < p.Docs || a.Rows > p.Docs && in.run.Status != results.RunRunning):
		what = append(what, fmt.Sprintf("%s, but its passes row counts %d documents", rowCount(a.Rows), p.Docs))
	}
	if want := int64(in.manifest.Shard.Documents); p.Complete() && p.Mode != extractbench.ModeContext && a.Rows != want {
		what = append(what, fmt.Sprintf("complete, so every one of the shard's %d documents once, but %s", want, rowCount(a.Rows)))
	}
	return what
}

// rowCount is n rows in words: "1 row", "30 rows".
func rowCount(n int64) string {
	if n == 1 {
		return "1 row"
	}
	return fmt.Sprintf("%d rows", n)
}
