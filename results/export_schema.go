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
	utf8("model", nullable),         // the variant's engine.model
	utf8("engine", nullable),        // engine.kind: vllm, sglang, builtin, ...
	utf8("engine_version", nullable),
	utf8("gpu", nullable), // gpu.name as the manifest records it
}

// runContextCTE computes runContextFields once per (run, variant); the
// export joins it to each table by run_id and variant.
const runContextCTE = `WITH ctx AS MATERIALIZED (
	SELECT r.run_id AS run_id, json_extract(v.value, '$.name') AS variant, r.started_at AS run_started_at,
		NULLIF(json_extract(v.value, '$.engine.model'), '') AS model,
		NULLIF(json_extract(v.value, '$.engine.kind'), '') AS engine,
		NULLIF(json_extract(v.value, '$.engine.version'), '') AS engine_version,
		NULLIF(json_extract(v.value, '$.gpu.name'), '') AS gpu
	FROM runs r, json_each(CASE WHEN json_valid(r.manifest) THEN r.manifest ELSE '{}' END, '$.variants') v)
`

// exportTable is one Parquet file: its Arrow schema (the table's columns,
// renamed where exportRenames says, then runContextFields), the columns it
// dictionary-encodes, and the query that reads it.
type exportTable struct {
	file   string
	schema *arrow.Schema
	dict   map[string]bool
	query  string
}

// newExportTable is the file of table, whose columns are tableSchema's, of
// which dict are dictionary-encoded (the run context always is: one value
// per run and variant).
func newExportTable(file, table string, tableSchema *arrow.Schema, dict map[string]bool, order string) exportTable {
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
		newExportTable(PassesParquet, "passes", passesSchema, nil, "t.run_id, t.variant, t.mode, t.level, t.repetition"),
		newExportTable(TelemetryParquet, "telemetry", telemetrySchema, telemetryColumns.dictionary(), "t.rowid"),
		newExportTable(RequestFieldsParquet, "request_fields", requestFieldsSchema, requestFieldColumns.dictionary(), "t.rowid"),
		newExportTable(PassFieldsParquet, "pass_fields", passFieldsSchema, nil, "t.run_id, t.variant, t.mode, t.level, t.repetition, t.position"),
	}
}
