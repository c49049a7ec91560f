package resultstest

import (
	"strings"

	"github.com/extractbench/extractbench"
)

// Count is how many rows keep keeps.
func Count[T any](rows []T, keep func(*T) bool) int {
	n := 0
	for i := range rows {
		if keep(&rows[i]) {
			n++
		}
	}
	return n
}

// Where returns the rows keep keeps, in order.
func Where[T any](rows []T, keep func(*T) bool) []T {
	var out []T
	for i := range rows {
		if keep(&rows[i]) {
			out = append(out, rows[i])
		}
	}
	return out
}

// Distinct is how many different keys the rows have.
func Distinct[T any, K comparable](rows []T, key func(*T) K) int {
	seen := map[K]bool{}
	for i := range rows {
		seen[key(&rows[i])] = true
	}
	return len(seen)
}

// ByFailure counts requests rows per failure class (None for an accepted
// or unclassified row).
func ByFailure(reqs []extractbench.Record) map[extractbench.Failure]int {
	out := map[extractbench.Failure]int{}
	for _, r := range reqs {
		out[r.Failure]++
	}
	return out
}

// Like reports whether s matches the SQL LIKE pattern: % is any run of
// characters, _ any one character, and ASCII letters match either case, as
// SQLite's LIKE does, so that a test keeps the pattern its query had.
func Like(s, pattern string) bool {
	return like([]rune(asciiLower(s)), []rune(asciiLower(pattern)))
}

func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}

func like(s, p []rune) bool {
	for len(p) > 0 {
		switch p[0] {
		case '%':
			for len(p) > 0 && p[0] == '%' {
				p = p[1:]
			}
			if len(p) == 0 {
				return true
			}
			for i := range len(s) + 1 {
				if like(s[i:], p) {
					return true
				}
			}
			return false
		case '_':
			if len(s) == 0 {
				return false
			}
		default:
			if len(s) == 0 || s[0] != p[0] {
				return false
			}
		}
		s, p = s[1:], p[1:]
	}
	return len(s) == 0
}
