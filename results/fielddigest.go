package results

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/extractbench/extractbench"
)

// FieldAudit is what AuditFields found in one pass's request_fields rows.
type FieldAudit struct {
	Rows   int64
	SHA256 string // over the columns asked for; "" when none was
	// MissingColumns are columns asked for that the request_fields table
	// lacks (no SHA256 then).
	MissingColumns []string
}

// AuditFields reads the request_fields rows of pass key in (doc_id,
// field) order, the table's primary key, and returns their count and the
// SHA-256 of columns over them, in the form of a requests digest under
// its own header (SCHEMA.md, digests): what Digest.FieldSHA256 records.
// One row at a time, as AuditPass.
func (r *reader) AuditFields(ctx context.Context, key extractbench.PassKey, columns []string) (FieldAudit, error) {
	return auditFields(ctx, r.rdb, key, columns)
}

func auditFields(ctx context.Context, q querier, key extractbench.PassKey, columns []string) (FieldAudit, error) {
	var a FieldAudit
	have, err := tableColumns(ctx, q, "main", "request_fields")
	if err != nil {
		return a, fmt.Errorf("audit the fields of pass %s: %w", key, err)
	}
	for _, c := range columns {
		if !slices.Contains(have, c) {
			a.MissingColumns = append(a.MissingColumns, c)
		}
	}
	sel := columns
	if len(columns) == 0 || len(a.MissingColumns) > 0 {
		sel = []string{"doc_id"} // count only
	}
	rows, err := q.QueryContext(ctx, `SELECT `+strings.Join(sel, ", ")+` FROM request_fields
		WHERE run_id = ? AND variant = ? AND mode = ? AND level = ? AND repetition = ? ORDER BY doc_id, field`,
		key.RunID, key.Variant, key.Mode, key.Level, key.Repetition)
	if err != nil {
		return a, fmt.Errorf("audit the fields of pass %s: %w", key, err)
	}
	defer rows.Close()
	hashed := len(columns) > 0 && len(a.MissingColumns) == 0
	h := sha256.New()
	h.Write([]byte(fieldDigestHeader + strings.Join(columns, ",") + "\n"))
	vals := make([]any, len(sel))
	ptrs := make([]any, len(sel))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var buf []byte
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return a, fmt.Errorf("audit the fields of pass %s: %w", key, err)
		}
		a.Rows++
		if !hashed {
			continue
		}
		buf = buf[:0]
		for _, v := range vals {
			if buf, err = appendValue(buf, v); err != nil {
				return a, fmt.Errorf("audit the fields of pass %s: %w", key, err)
			}
		}
		h.Write(buf)
	}
	if err := rows.Err(); err != nil {
		return a, fmt.Errorf("audit the fields of pass %s: %w", key, err)
	}
	if hashed {
		a.SHA256 = hex.EncodeToString(h.Sum(nil))
	}
	return a, nil
}

// Matches reports whether a is what digest d recorded of the pass's
// request_fields rows; true when d does not cover them (CoversFields).
func (a FieldAudit) Matches(d Digest) bool {
	return !d.CoversFields() || len(a.MissingColumns) == 0 && a.Rows == d.FieldRows && a.SHA256 == d.FieldSHA256
}
