package corpus

import "github.com/extractbench/extractbench/jsonscan"

// decodeIndexed decodes a record read back into d as json.Unmarshal does,
// for the shape every indexed record has (Open validated it): one object
// with the keys id, text, length_class, expected and optionally lang,
// expected holding date, amount and category as strings or null. It returns false on
// anything else (another key or a key given twice, an escape it does not
// decode, invalid UTF-8, a syntax error), and json.Unmarshal decides: the
// reflection and the validating pass json.Unmarshal makes were half of what
// reading a document back cost. FuzzDecodeIndexed holds the two equal.
func decodeIndexed(rec []byte, d *Document) bool {
	s := jsonscan.Scanner{B: rec}
	var seen uint8
	s.WS()
	ok := s.Object(func(key []byte) bool {
		switch string(key) {
		case "id":
			return s.Once(&seen, 1) && readStr(&s, &d.ID)
		case "text":
			return s.Once(&seen, 2) && readStr(&s, &d.Text)
		case "length_class":
			var c string
			ok := s.Once(&seen, 4) && readStr(&s, &c)
			d.LengthClass = LengthClass(c)
			return ok
		case "expected":
			return s.Once(&seen, 8) && readExpected(&s, &d.Expected)
		case "lang":
			return s.Once(&seen, 16) && readStr(&s, &d.Lang)
		}
		return false
	})
	return ok && s.Done()
}

// readStr reads a string into *p.
func readStr(s *jsonscan.Scanner, p *string) bool {
	v, ok := s.Str()
	if ok {
		*p = v
	}
	return ok
}

// readExpected reads the expectations, each a string or null.
func readExpected(s *jsonscan.Scanner, e *Expected) bool {
	var seen uint8
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "date":
			return s.Once(&seen, 1) && readOptStr(s, &e.Date)
		case "amount":
			return s.Once(&seen, 2) && readOptStr(s, &e.Amount)
		case "category":
			return s.Once(&seen, 4) && readOptStr(s, &e.Category)
		}
		return false
	})
}

// readOptStr reads a string or null (nil) into *p, as json.Unmarshal fills a *string.
func readOptStr(s *jsonscan.Scanner, p **string) bool {
	v, null, ok := s.OptStr()
	switch {
	case !ok:
		return false
	case null:
		*p = nil
	default:
		*p = &v
	}
	return true
}
