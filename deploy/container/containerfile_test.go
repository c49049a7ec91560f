package container

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// instruction is one Containerfile instruction, its continuation lines joined.
type instruction struct {
	line int
	cmd  string // upper case: FROM, COPY, ...
	args string
}

// parseContainerfile reads the instructions of a Containerfile: comments
// and blank lines dropped, backslash continuations joined.
func parseContainerfile(t *testing.T, path string) []instruction {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []instruction
	var cur strings.Builder
	start := 0
	for i, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if cur.Len() == 0 && (l == "" || strings.HasPrefix(l, "#")) {
			continue
		}
		if cur.Len() == 0 {
			start = i + 1
		}
		if strings.HasSuffix(l, "\\") {
			cur.WriteString(strings.TrimSuffix(l, "\\") + " ")
			continue
		}
		cur.WriteString(l)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{line: start, cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)})
		cur.Reset()
	}
	return out
}

// script is scripts/image.sh, read once per test.
func script(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "scripts", "image.sh"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// scriptDefault is the default of a `name=${NAME:-default}` line of the script.
func scriptDefault(t *testing.T, s, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + name + `=\$\{[A-Z_]+:-([^}]*)\}`).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("scripts/image.sh sets no default for %s", name)
	}
	return m[1]
}

// scriptUID is the uid scripts/image.sh gives the image's user.
func scriptUID(t *testing.T, s string) int {
	t.Helper()
	m := regexp.MustCompile(`(?m)^uid=([0-9]+)$`).FindStringSubmatch(s)
	if m == nil {
		t.Fatal("scripts/image.sh sets no uid=N")
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// The image is FROM scratch with nothing run at build time (so it builds
// offline and where no container can start), runs as the non-root user the
// script writes into /etc/passwd, and starts the binary itself, exec form,
// with no shell in between.
func TestContainerfile(t *testing.T) {
	s := script(t)
	uid := scriptUID(t, s)
	var from, users, entrypoints []instruction
	userWork := false // the working directory, where -out's default lands, is the user's
	for _, in := range parseContainerfile(t, "Containerfile") {
		switch in.cmd {
		case "FROM":
			from = append(from, in)
		case "USER":
			users = append(users, in)
		case "ENTRYPOINT":
			entrypoints = append(entrypoints, in)
		case "RUN", "SHELL", "ADD", "ONBUILD":
			t.Errorf("Containerfile:%d: %s: the image must build offline with no container run (COPY from the context only)", in.line, in.cmd)
		case "COPY":
			args := strings.Fields(in.args)
			for len(args) > 0 && strings.HasPrefix(args[0], "--") {
				if strings.HasPrefix(args[0], "--from") {
					t.Errorf("Containerfile:%d: COPY %s: the image copies from the context only", in.line, in.args)
				}
				if c, ok := strings.CutPrefix(args[0], "--chown="); ok && c != strconv.Itoa(uid)+":"+strconv.Itoa(uid) {
					t.Errorf("Containerfile:%d: COPY %s: owned by %s, want the image's user %d", in.line, in.args, c, uid)
				}
				args = args[1:]
			}
			if len(args) != 2 || !strings.Contains(s, "$work/"+strings.TrimSuffix(args[0], "/")) {
				t.Errorf("Containerfile:%d: COPY %s: scripts/image.sh does not lay it out in the context", in.line, in.args)
			}
			if args[1] == "/work/" {
				userWork = strings.Contains(in.args, "--chown=")
			}
		}
	}
	if len(from) != 1 || from[0].args != "scratch" {
		t.Errorf("Containerfile FROM %v, want one FROM scratch (no base to pull; the binary is static)", from)
	}
	if len(users) != 1 || users[0].args != strconv.Itoa(uid)+":"+strconv.Itoa(uid) {
		t.Errorf("Containerfile USER %v, want %d:%d, the non-root user scripts/image.sh creates (numeric: Kubernetes' runAsNonRoot checks it)", users, uid, uid)
	}
	if uid == 0 {
		t.Errorf("the image's user is root")
	}
	if !userWork {
		t.Errorf("Containerfile: no COPY --chown=%d:%d makes /work/, the working directory, the user's: extractbench run could not write its default -out there", uid, uid)
	}
	if len(entrypoints) != 1 {
		t.Fatalf("Containerfile has %d ENTRYPOINT, want 1", len(entrypoints))
	}
	var entry []string
	if err := json.Unmarshal([]byte(entrypoints[0].args), &entry); err != nil {
		t.Fatalf("Containerfile:%d: ENTRYPOINT %s is not the exec (JSON) form: the shell form needs /bin/sh", entrypoints[0].line, entrypoints[0].args)
	}
	if !slices.Equal(entry, []string{"/usr/local/bin/extractbench"}) || !strings.Contains(s, "bin=$root"+entry[0]) {
		t.Errorf("ENTRYPOINT %q, want the binary scripts/image.sh builds, at /usr/local/bin/extractbench", entry)
	}
}

// The binary is static: cgo's SQLite linked against static glibc, with the
// pure-Go resolver and user lookup so that no NSS module is loaded at run
// time, and SQLite's extension loading (dlopen) compiled out; the script
// refuses a binary with an ELF interpreter or a needed shared library.
func TestImageScriptBuildsStatic(t *testing.T) {
	s := script(t)
	for _, want := range []string{
		"CGO_ENABLED=1 go build",
		"-linkmode external -extldflags -static",
		"-X main.commit=$commit", // version names the commit: the context has no .git to stamp
		"-tags osusergo,netgo,sqlite_omit_load_extension",
		"./cmd/extractbench",
		`grep -q 'INTERP'`,
		`grep -q 'NEEDED'`,
		"build --pull=never",
		"-f deploy/container/Containerfile",
		"extractbench version",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("scripts/image.sh does not contain %q", want)
		}
	}
}

// The Kubernetes Jobs run the image the script builds, as its user, with
// the results volume writable by that user's group.
func TestManifestsRunTheImage(t *testing.T) {
	s := script(t)
	want := scriptDefault(t, s, "image") + ":" + scriptDefault(t, s, "tag")
	uid := scriptUID(t, s)
	files, _ := filepath.Glob(filepath.Join("..", "kubernetes", "*-job.yaml"))
	if len(files) == 0 {
		t.Fatal("no deploy/kubernetes/*-job.yaml")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var j struct {
			Spec struct {
				Template struct {
					Spec struct {
						SecurityContext struct {
							RunAsNonRoot *bool `yaml:"runAsNonRoot"`
							RunAsUser    *int  `yaml:"runAsUser"`
							RunAsGroup   *int  `yaml:"runAsGroup"`
							FSGroup      *int  `yaml:"fsGroup"`
						} `yaml:"securityContext"`
						Containers []struct {
							Image string `yaml:"image"`
						} `yaml:"containers"`
					} `yaml:"spec"`
				} `yaml:"template"`
			} `yaml:"spec"`
		}
		if err := yaml.Unmarshal(b, &j); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		pod := j.Spec.Template.Spec
		for _, c := range pod.Containers {
			if c.Image != want {
				t.Errorf("%s: image %q, want %q, the one scripts/image.sh builds", f, c.Image, want)
			}
		}
		sc := pod.SecurityContext
		if sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser != uid ||
			sc.RunAsGroup == nil || *sc.RunAsGroup != uid || sc.FSGroup == nil || *sc.FSGroup != uid {
			t.Errorf("%s: pod securityContext %+v, want runAsNonRoot, runAsUser, runAsGroup and fsGroup %d (the image's user; fsGroup makes the volume writable)", f, sc, uid)
		}
	}
}
