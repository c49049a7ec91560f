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

// readmeSetUp are the two set-up commands the README opens with.
var readmeSetUp = []string{"go run ./cmd/extractbench run -out extractbench-results", "go test ./..."}

// TestREADME_IsAPage: README.md is a page a newcomer reads through (under
// 250 lines, the rest in docs/), its first block after the title is the two
// set-up commands and nothing else, and it keeps the house map (Layout)
// that imports_test.go cites.
func TestREADME_IsAPage(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if n := strings.Count(text, "\n"); n >= 250 {
		t.Errorf("README.md has %d lines: keep it under 250 and move the rest into docs/", n)
	}
	title, rest, _ := strings.Cut(text, "\n")
	if title != "# extractbench" {
		t.Errorf("README.md starts with %q, want the title # extractbench", title)
	}
	rest = strings.TrimLeft(rest, "\n")
	block, ok := strings.CutPrefix(rest, "```sh\n")
	if !ok {
		t.Fatalf("README.md: the title is not followed by a sh block:\n%.200s", rest)
	}
	block, _, _ = strings.Cut(block, "```")
	var cmds []string
	for _, l := range strings.Split(strings.TrimSpace(block), "\n") {
		cmd, _, _ := strings.Cut(l, "#")
		cmds = append(cmds, strings.TrimSpace(cmd))
	}
	if strings.Join(cmds, "\n") != strings.Join(readmeSetUp, "\n") {
		t.Errorf("README.md's first block runs %q, want exactly %q", cmds, readmeSetUp)
	}
	for _, h := range []string{"\n## What it answers\n", "\n## A five-minute tour\n", "\n## Where to go next\n", "\n## Layout\n"} {
		if !strings.Contains(text, h) {
			t.Errorf("README.md has no section %q", strings.TrimSpace(h))
		}
	}
}
