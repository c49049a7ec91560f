package results

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
)

var (
	docTable  = regexp.MustCompile("^## `([a-z_]+)`$")
	docColumn = regexp.MustCompile("^\\| `([a-z0-9_]+|[a-z0-9_]*<class>[a-z0-9_]*)` \\| ([A-Z]+) \\| (yes|no) \\| (.+) \\|$")
)

// parseSchemaDoc reads SCHEMA.md's column tables: table name → columns in
// order, with type and NULL rule. A column row without a meaning is an error.
// A row named with <class> stands for one column per class of
// extractbench.Failures, in their order, so that a new class needs no row.
func parseSchemaDoc(t *testing.T, path string) map[string][]columnInfo {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tables := map[string][]columnInfo{}
	table := ""
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if m := docTable.FindStringSubmatch(text); m != nil {
			table = m[1]
			tables[table] = nil
			continue
		}
		if strings.HasPrefix(text, "## ") {
			table = "" // a section that is not a table (Indices, raw_table.csv)
			continue
		}
		if table == "" || !strings.HasPrefix(text, "| `") {
			continue
		}
		m := docColumn.FindStringSubmatch(text)
		if m == nil {
			t.Errorf("SCHEMA.md:%d: column row does not read | `name` | TYPE | yes/no | meaning |: %s", line, text)
			continue
		}
		if !strings.Contains(m[1], "<class>") {
			tables[table] = append(tables[table], columnInfo{name: m[1], typ: m[2], notNull: m[3] == "no"})
			continue
		}
		for _, f := range extractbench.Failures {
			tables[table] = append(tables[table], columnInfo{name: strings.ReplaceAll(m[1], "<class>", string(f)), typ: m[2], notNull: m[3] == "no"})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return tables
}

// TestSchemaDoc checks that SCHEMA.md documents every table the migrations
// create and every column of its column list, in the list's order (that of
// the Parquet files), with their type and NULL rule, and nothing else.
// TestColumnTables_MatchTables holds the lists to the tables.
func TestSchemaDoc(t *testing.T) {
	s, _ := MustOpen(t)
	doc := parseSchemaDoc(t, "SCHEMA.md")
	lists := columnLists()
	for _, table := range tableNames(t, s.rdb) {
		var want []columnInfo
		for _, c := range lists[table] {
			want = append(want, columnInfo{name: c.name, typ: c.typ, notNull: !c.nullable})
		}
		got, ok := doc[table]
		if !ok {
			t.Errorf("SCHEMA.md has no section for table %s", table)
			continue
		}
		for _, d := range diffColumns(got, want) {
			t.Errorf("SCHEMA.md table %s: %s", table, d)
		}
		delete(doc, table)
	}
	for table := range doc {
		t.Errorf("SCHEMA.md documents table %s, which the migrations do not create", table)
	}
}

// diffColumns says how the documented columns got differ from the listed
// ones want: each column one lacks, then the first out of place, so that a
// new column reads as one line, not as both tables.
func diffColumns(got, want []columnInfo) []string {
	var out []string
	in := func(cs []columnInfo, name string) bool {
		return slices.ContainsFunc(cs, func(c columnInfo) bool { return c.name == name })
	}
	for _, c := range want {
		if !in(got, c.name) {
			out = append(out, fmt.Sprintf("column %s (%s) is not documented", c.name, c.typ))
		}
	}
	for _, c := range got {
		if !in(want, c.name) {
			out = append(out, fmt.Sprintf("documents column %s, which the column list does not have", c.name))
		}
	}
	if len(out) > 0 {
		return out
	}
	if len(got) != len(want) {
		return []string{fmt.Sprintf("%d rows for %d columns: a column documented twice", len(got), len(want))}
	}
	for i := range want {
		if got[i] != want[i] {
			return []string{fmt.Sprintf("row %d is %+v, want %+v (the column list's order, type and NULL rule)", i+1, got[i], want[i])}
		}
	}
	return nil
}
