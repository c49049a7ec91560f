package results

import (
	"bufio"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

var (
	docTable  = regexp.MustCompile("^## `([a-z_]+)`$")
	docColumn = regexp.MustCompile("^\\| `([a-z0-9_]+)` \\| ([A-Z]+) \\| (yes|no) \\| (.+) \\|$")
)

// parseSchemaDoc reads SCHEMA.md's column tables: table name → columns in
// order, with type and NULL rule. A column row without a meaning is an error.
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
		tables[table] = append(tables[table], columnInfo{name: m[1], typ: m[2], notNull: m[3] == "no"})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return tables
}

// TestSchemaDoc checks that SCHEMA.md documents every table and column the
// migrations create, in order, with their type and NULL rule, and nothing else.
func TestSchemaDoc(t *testing.T) {
	s, _ := MustOpen(t)
	doc := parseSchemaDoc(t, "SCHEMA.md")

	tables := tableNames(t, s.rdb)

	for _, table := range tables {
		want := tableInfo(t, s.rdb, table)
		got, ok := doc[table]
		if !ok {
			t.Errorf("SCHEMA.md has no section for table %s", table)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("SCHEMA.md table %s:\n got %v\nwant %v", table, got, want)
		}
		delete(doc, table)
	}
	for table := range doc {
		t.Errorf("SCHEMA.md documents table %s, which the migrations do not create", table)
	}
}
