// Package eval owns the judgement of one engine answer and of a pass: it
// parses the output (strict and lenient rules), checks it against the JSON
// Schema and the field rules, scores each field against the reviewed
// expectation, classifies every failure (memory, truncation, format, quality,
// error) by the precedence of MEASUREMENT.md section 6, aggregates a pass, and
// holds the statistics the reports rest on: percentiles, bootstrap intervals
// and the paired equivalence test of section 8.
//
// Nothing here does I/O: the pipeline calls Evaluate once per request and the
// report calls Aggregate, Describe and Equivalence on stored records.
package eval
