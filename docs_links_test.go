package extractbench_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// mdLink matches an inline Markdown link's target: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocsLinksResolve: every relative link of README.md and docs/*.md
// names a file of the repository and, with a #fragment, a heading of it
// (as GitHub makes a heading's anchor), so that a page that moves or a
// heading that is renamed takes its links along.
func TestDocsLinksResolve(t *testing.T) {
	checked, toDocs := 0, 0
	for _, page := range docPages(t) {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range proseLines(string(b)) {
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				path, frag, _ := strings.Cut(target, "#")
				file := page
				if path != "" {
					file = filepath.Join(filepath.Dir(page), filepath.FromSlash(path))
				}
				if page == "README.md" && strings.HasPrefix(path, "docs/") {
					toDocs++
				}
				if _, err := os.Stat(file); err != nil {
					t.Errorf("%s:%d: link %s: no such file %s", page, i+1, target, file)
					continue
				}
				if frag == "" {
					continue
				}
				if !strings.HasSuffix(file, ".md") {
					t.Errorf("%s:%d: link %s: an anchor in a file that is not Markdown", page, i+1, target)
					continue
				}
				anchors, err := headingAnchors(file)
				if err != nil {
					t.Fatal(err)
				}
				if !anchors[frag] {
					t.Errorf("%s:%d: link %s: %s has no heading whose anchor is #%s", page, i+1, target, file, frag)
				}
			}
		}
	}
	if toDocs < 10 {
		t.Errorf("README.md links %d times into docs/: want its \"where to go next\" to name every page", toDocs)
	}
	if checked < 30 {
		t.Errorf("checked %d relative links: the parser lost them", checked)
	}
}

// proseLines returns the page's lines with those of fenced code blocks
// blanked, so that line numbers stay the file's.
func proseLines(text string) []string {
	lines := strings.Split(text, "\n")
	inFence := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			inFence = !inFence
			lines[i] = ""
			continue
		}
		if inFence {
			lines[i] = ""
		}
	}
	return lines
}

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown file: lower case, punctuation other than - and _ removed,
// spaces as -, a repeated anchor suffixed -1, -2 ...
func headingAnchors(file string) (map[string]bool, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, l := range proseLines(string(b)) {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(l, "#"))
		var slug strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				slug.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				slug.WriteRune(r)
			}
		}
		s := slug.String()
		if n := seen[s]; n > 0 {
			anchors[s+"-"+itoa(n)] = true
		} else {
			anchors[s] = true
		}
		seen[s]++
	}
	return anchors, nil
}
