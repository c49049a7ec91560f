#!/usr/bin/env bash
# duckdb-dataset.sh ROOT: runs docs/scale-out.md's DuckDB query ("One dataset for every shard and night") and
# a DESCRIBE on the Hive-partitioned dataset under ROOT (export -partitioned [-dataset ROOT]), with
# DuckDB's Node API from the npm registry (installed once into ${DUCKDB_NODE_DIR:-/tmp/duckdb-node};
# this machine has no DuckDB wheel). Not part of go test: it needs npm and node.
#
#   bash scripts/duckdb-dataset.sh extractbench-results
set -euo pipefail
root=$(cd "${1:?usage: duckdb-dataset.sh ROOT}" && pwd)
dir=${DUCKDB_NODE_DIR:-/tmp/duckdb-node}
if [ ! -d "$dir/node_modules/@duckdb/node-api" ]; then
	mkdir -p "$dir"
	(cd "$dir" && npm init -y >/dev/null && npm install --silent @duckdb/node-api >/dev/null)
fi
cat >"$dir/query.mjs" <<'JS'
import { DuckDBInstance } from '@duckdb/node-api';
const c = await (await DuckDBInstance.create(':memory:')).connect();
for (const sql of process.argv.slice(2)) {
  const r = await c.runAndReadAll(sql);
  console.log(r.columnNames().join('\t'));
  for (const row of r.getRows()) console.log(row.map(String).join('\t'));
  console.log();
}
JS
files="read_parquet('$root/requests/**/*.parquet', hive_partitioning = true, union_by_name = true)"
cd "$dir" && node query.mjs \
	"SELECT variant, level, count(DISTINCT run_id) AS runs, count(*) AS requests,
	        round(avg(accepted::INT), 4) AS accepted_share, round(quantile_cont(e2e_ns, 0.95) / 1e6, 2) AS pooled_e2e_ms_p95
	 FROM $files WHERE transport_kind IS DISTINCT FROM 'interrupted' AND transport_kind IS DISTINCT FROM 'client'
	   AND run_id LIKE 'merged-%' GROUP BY ALL ORDER BY ALL" \
	"SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM $files)"
