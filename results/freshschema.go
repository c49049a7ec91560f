package results

import (
	"context"
	"database/sql"
	_ "embed" // fresh_schema.sql
	"fmt"
)

// freshSchema is the schema the migrations build, as SQLite keeps it: the
// SQL of every table and index in sqlite_schema, in the order they were
// created, then the user_version it is at. A new database is created from
// it in one transaction instead of replaying every migration, each ALTER
// TABLE of which re-reads the whole schema: 40 ms of CPU for each run and
// merge, a tenth of a 400-document run's. TestFreshSchema_IsTheMigrations
// holds it to the migrations; `go test ./results -run FreshSchema -update`
// rewrites it once a migration is added.
//
//go:embed fresh_schema.sql
var freshSchema string

// createFresh creates freshSchema in tx when the database holds nothing
// (user_version 0 and no table), and reports whether it did.
func createFresh(ctx context.Context, tx *sql.Tx) (bool, error) {
	var objects int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema`).Scan(&objects); err != nil {
		return false, fmt.Errorf("read the schema: %w", err)
	}
	if objects > 0 {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, freshSchema); err != nil {
		return false, fmt.Errorf("create the schema: %w", err)
	}
	return true, nil
}
