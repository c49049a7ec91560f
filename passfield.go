package extractbench

// PassField is how one field scored over a pass: the sums of its
// documents' FieldScore counts and the ratios made of them (one row of
// results' pass_fields). The run and the merge compute it alike, from the
// pass's records (eval's PassTally), so that the two agree.
type PassField struct {
	Name     string
	Position int   // the field's place in the protocol's order, from 0
	TP       int64 // sum of FieldScore.TP over the pass's records
	FP       int64
	FN       int64 // a field that never reached scoring while a value was expected counts here
	TN       int64 // records whose field was TN (no value expected, none given)
	Unscored int64 // records whose field was not scored (no parse, transport failure, not reviewed)
	// Precision, Recall and F1 are TP/(TP+FP), TP/(TP+FN) and
	// 2TP/(2TP+FP+FN); a 0/0 ratio is 1 when the field made no error of
	// the other kind either, else 0 (MEASUREMENT.md section 7).
	Precision float64
	Recall    float64
	F1        float64
}
