package main

import "fmt"

// didYouMean is " (did you mean \"x\"?)" for the name nearest to got, or ""
// when none is near enough to be a typo.
func didYouMean(got string, names []string) string {
	if n := nearest(got, names); n != "" {
		return fmt.Sprintf(" (did you mean %q?)", n)
	}
	return ""
}

// nearest is the name at the smallest edit distance from got, when that
// distance is at most a third of got's length (at least 1) or got is a
// prefix of it; "" otherwise.
func nearest(got string, names []string) string {
	best, bestD := "", 1<<30
	for _, n := range names {
		d := editDistance(got, n)
		if len(got) >= 2 && len(n) > len(got) && n[:len(got)] == got {
			d = min(d, 1) // a prefix is as good as one typo
		}
		if d < bestD || d == bestD && n < best {
			best, bestD = n, d
		}
	}
	if bestD <= max(1, len(got)/3) {
		return best
	}
	return ""
}

// editDistance is the Damerau–Levenshtein distance (optimal string
// alignment) between a and b, counting a swap of two neighbours as one edit.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
