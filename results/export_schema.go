package results

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// The Arrow schemas of the exported Parquet files, derived from the
// tables' column lists so that every column has the type its meaning
// needs: instants and durations are int64 nanoseconds named *_ns (never a
// timestamp type mapped by reflection), flags are booleans, labels utf8,
// and a column is nullable exactly when the table lets it be NULL
// (unknown). TestColumnTables_MatchTables checks them against the tables.

func i64(name string, nullable bool) arrow.Field {
	return arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Int64, Nullable: nullable}
}

func f64(name string, nullable bool) arrow.Field {
	return arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Float64, Nullable: nullable}
}

func boolean(name string, nullable bool) arrow.Field {
	return arrow.Field{Name: name, Type: arrow.FixedWidthTypes.Boolean, Nullable: nullable}
}

func utf8(name string, nullable bool) arrow.Field {
	return arrow.Field{Name: name, Type: arrow.BinaryTypes.String, Nullable: nullable}
}

// nullable is the Arrow fields' flag of a column that may be NULL.
const nullable = true

// requestsSchema is the schema of requests.parquet: every column of
// requests, from requestColumns.
var requestsSchema = requestColumns.schema()

// telemetrySchema is the schema of telemetry.parquet, from telemetryColumns.
var telemetrySchema = telemetryColumns.schema()

// passesSchema is the schema of passes.parquet, from passColumns.
var passesSchema = passColumns.schema()

// requestFieldsSchema and passFieldsSchema are the schemas of
// request_fields.parquet and pass_fields.parquet.
var (
	requestFieldsSchema = requestFieldColumns.schema()
	passFieldsSchema    = passFieldColumns.schema()
)

// exportRenames are the table columns a Parquet file or raw_table.csv names
// otherwise: passes.accepted counts documents, while requests.accepted is
// a flag, and a query that reads both files must not mix them up.
var exportRenames = map[string]map[string]string{
	"passes": {"accepted": "accepted_docs"},
}

// runContextFields are appended to every Parquet file: what the row was
// measured with, from the run's row and its manifest's variant, so that a
// file read alone (or files of several runs read together) says which
// model, engine and GPU each row is about. NULL when the manifest does not
// say (a variant whose engine never started).
var runContextFields = []arrow.Field{
	i64("run_started_at", nullable), // runs.started_at: Unix ms, UTC
	// The same instant as a Parquet TIMESTAMP (microseconds, adjusted to
	// UTC), which readers join and filter on as a time, not a number.
	{Name: "run_started_time", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: nullable},
	utf8("model", nullable),  // the variant's engine.model
	utf8("engine", nullable), // engine.kind: vllm, sglang, builtin, ...
	utf8("engine_version", nullable),
	utf8("gpu", nullable), // gpu.name as the manifest records it
}

// runContextCTE computes runContextFields once per (run, variant); the
// export joins it to each table by run_id and variant.
const runContextCTE = `WITH ctx AS MATERIALIZED (
	SELECT r.run_id AS run_id, json_extract(v.value, '$.name') AS variant, r.started_at AS run_started_at,
		r.started_at * 1000 AS run_started_time,
		NULLIF(json_extract(v.value, '$.engine.model'), '') AS model,
		NULLIF(json_extract(v.value, '$.engine.kind'), '') AS engine,
		NULLIF(json_extract(v.value, '$.engine.version'), '') AS engine_version,
		NULLIF(json_extract(v.value, '$.gpu.name'), '') AS gpu
	FROM runs r, json_each(CASE WHEN json_valid(r.manifest) THEN r.manifest ELSE '{}' END, '$.variants') v)
`

// derivedField is a column a Parquet file adds after its table's: a
// figure the store does not keep, computed by the export's query from the
// table's rows by the rule eval applies.
type derivedField struct {
	field arrow.Field
	expr  string // over the table as t
}

// passLevel is the window of a pass's level: its run, variant, mode and
// level, the passes eval's aggregator makes one level of.
const passLevel = `OVER (PARTITION BY t.run_id, t.variant, t.mode, t.level)`

// passComplete and passBound are SQL for a complete pass and a complete
// client-bound one (extractbench.Pass.Complete, Pass.ClientBound).
const (
	passComplete = `(coalesce(t.status, '') IN ('', 'complete'))`
	passBound    = `(` + passComplete + ` AND coalesce(t.client_bound, 0) = 1)`
)

// passLeftOut is eval's rule (levelBuilder.leftOut) in SQL: a complete
// client-bound repetition is left out of its level's figures when most of
// the level's complete repetitions were not client-bound.
const passLeftOut = `(` + passBound + ` AND 2 * (sum(` + passComplete + `) ` + passLevel + ` - sum(` + passBound + `) ` + passLevel +
	`) > sum(` + passComplete + `) ` + passLevel + `)`

// passDerived are passes.parquet's columns after the table's: whether
// eval's aggregator left the repetition out of its level's figures, and
// why, so that a query over the file gives the figures every page shows.
var passDerived = []derivedField{
	{boolean("left_out", !nullable), `CASE WHEN ` + passLeftOut + ` THEN 1 ELSE 0 END`},
	{utf8("left_out_reason", nullable), `CASE WHEN ` + passLeftOut +
		` THEN 'client_bound: the client could not keep the level''s pace in this repetition, unlike most of the level''s' END`},
}

// exportTable is one Parquet file: its Arrow schema (the table's columns,
// renamed where exportRenames says, then runContextFields), the columns it
// dictionary-encodes, and the query that reads it.
type exportTable struct {
	file   string
	schema *arrow.Schema
	dict   map[string]bool
	query  string
	// visit, when set, is handed each row's cells as they are scanned, so
	// that a reader of the same rows needs no read of its own
	// (Store.ExportRequests).
	visit func(cells []cell) error
}

// newExportTable is the file of table, whose columns are tableSchema's, of
// which dict are dictionary-encoded (the run context always is: one value
// per run and variant).
func newExportTable(file, table string, tableSchema *arrow.Schema, dict map[string]bool, order string, derived ...derivedField) exportTable {
	var fields []arrow.Field
	var cols []string
	encode := map[string]bool{}
	for _, f := range tableSchema.Fields() {
		cols = append(cols, "t."+f.Name)
		if to, ok := exportRenames[table][f.Name]; ok {
			f.Name = to
		}
		fields = append(fields, f)
		if dict[f.Name] {
			encode[f.Name] = true
		}
	}
	for _, d := range derived {
		cols = append(cols, d.expr+" AS "+d.field.Name)
		fields = append(fields, d.field)
	}
	for _, f := range runContextFields {
		cols = append(cols, "ctx."+f.Name)
		fields = append(fields, f)
		encode[f.Name] = true
	}
	return exportTable{file: file, schema: arrow.NewSchema(fields, nil), dict: encode,
		query: runContextCTE + `SELECT ` + strings.Join(cols, ", ") + ` FROM ` + table + ` t
	LEFT JOIN ctx ON ctx.run_id = t.run_id AND ctx.variant = t.variant ORDER BY ` + order}
}

// exportTables are the Parquet files Export writes, in order.
func exportTables() []exportTable {
	return []exportTable{
		newExportTable(RequestsParquet, "requests", requestsSchema, requestColumns.dictionary(), "t.rowid"),
		// A few rows per run: a dictionary would save nothing.
		newExportTable(PassesParquet, "passes", passesSchema, nil, "t.run_id, t.variant, t.mode, t.level, t.repetition", passDerived...),
		newExportTable(TelemetryParquet, "telemetry", telemetrySchema, telemetryColumns.dictionary(), "t.rowid"),
		newExportTable(RequestFieldsParquet, "request_fields", requestFieldsSchema, requestFieldColumns.dictionary(), "t.rowid"),
		newExportTable(PassFieldsParquet, "pass_fields", passFieldsSchema, nil, "t.run_id, t.variant, t.mode, t.level, t.repetition, t.position"),
	}
}
