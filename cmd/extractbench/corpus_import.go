package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/pipeline/protocol"
)

// importCorpus writes a corpus directory from where a team keeps its
// data: a JSONL of records, or a CSV of expectations beside a folder of
// ID.txt texts.
func (c *corpusCommand) importCorpus(args []string) error {
	fs := newFlags("corpus import [-protocol FILE] [-texts DIR] -out DIR SOURCE",
		"Write a corpus directory (documents.jsonl, manifest.json) from SOURCE:\n"+
			"  a .jsonl file of {\"id\", \"text\", \"expected\": {...}} records (optionally \"class\": short|usual|long, \"lang\"), or\n"+
			"  a .csv of expectations (header: id, then one column per field; lists and objects as JSON in the cell; an empty cell is null)\n"+
			"  beside -texts DIR, which holds each document's text as ID.txt.\n"+
			"With -protocol, every expectation is checked against the protocol's declared fields (and CSV cells typed by them);\n"+
			"without, the fields are the source's own (the first record's keys, or the CSV's columns). Every problem is\n"+
			"printed as FILE:LINE: FIELD: WHY (exit 2) and nothing is written.", c.env)
	protoPath := fs.String("protocol", "", "check every expectation against this protocol `FILE`'s fields:")
	texts := fs.String("texts", "", "the folder of ID.txt texts beside a CSV `DIR`")
	out := fs.String("out", "", "the corpus `DIR` to write (new or empty)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return &usageError{msg: "corpus import: want exactly one SOURCE (.jsonl or .csv)"}
	}
	if *out == "" {
		return &usageError{msg: "corpus import: -out DIR is required"}
	}
	src := fs.Arg(0)
	isCSV := strings.EqualFold(filepath.Ext(src), ".csv")
	if !isCSV && !strings.EqualFold(filepath.Ext(src), ".jsonl") {
		return &usageError{msg: fmt.Sprintf("corpus import: %s: want a .jsonl or a .csv file", src)}
	}
	if isCSV && *texts == "" {
		return &usageError{msg: "corpus import: a CSV needs -texts DIR, the folder of ID.txt texts"}
	}
	if !isCSV && *texts != "" {
		return &usageError{msg: "corpus import: -texts is for a CSV; a JSONL record holds its text"}
	}
	if entries, err := os.ReadDir(*out); err == nil && len(entries) > 0 {
		return &usageError{msg: fmt.Sprintf("corpus import: -out %s is not empty; give a new directory", *out)}
	}
	var exp *corpus.Expectations
	var descriptions map[string]string
	if *protoPath != "" {
		p, err := protocol.Load(*protoPath)
		if err != nil {
			return err // every problem of the protocol, exit 2
		}
		e, declared := p.Expectations()
		if !declared {
			return &usageError{msg: fmt.Sprintf("corpus import: %s declares no fields:; import writes a corpus of declared fields (corpus generate writes one of the default fields)", *protoPath)}
		}
		exp = &e
		for _, f := range p.Fields {
			if f.Description != "" {
				if descriptions == nil {
					descriptions = map[string]string{}
				}
				descriptions[f.Name] = f.Description
			}
		}
	}
	var im *corpus.Imported
	var err error
	if isCSV {
		im, err = corpus.ImportCSV(src, *texts, exp)
	} else {
		im, err = corpus.ImportJSONL(src, exp)
	}
	if err != nil {
		return &usageError{msg: "corpus " + err.Error()}
	}
	for _, w := range im.Warnings {
		fmt.Fprintf(c.stdout, "warning: %s\n", w)
	}
	if len(im.Problems) > 0 {
		for _, p := range im.Problems {
			fmt.Fprintln(c.stdout, p)
		}
		return &usageError{msg: fmt.Sprintf("corpus import: %s has %d problem(s); nothing written", src, len(im.Problems))}
	}
	if err := corpus.WriteDirFields(*out, im.Docs, im.Names, descriptions); err != nil {
		return fmt.Errorf("corpus import: %w", err)
	}
	// Read back as a run will: the written corpus must load by its fields.
	check := corpus.Expectations{Names: im.Names}
	if exp != nil {
		check = *exp
	}
	written, err := corpus.LoadFields(*out, check)
	if err != nil {
		return fmt.Errorf("corpus import: the corpus written does not load back: %w", err)
	}
	m := written.Manifest
	fmt.Fprintf(c.stdout, "wrote %s: %d documents (short %d, usual %d, long %d), fields %s; sha256 %s\n",
		*out, m.Count, m.Classes[corpus.Short], m.Classes[corpus.Usual], m.Classes[corpus.Long], strings.Join(m.FieldNames, ", "), m.SHA256)
	return nil
}
