package kubernetes

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The types below mirror the batch/v1 and core/v1 fields the manifests
// use, under their API names; decoding with KnownFields refuses any other
// key, so a misspelt field (backofLimitPerIndex) fails here instead of
// being dropped by the API server.
type (
	meta struct {
		Name   string            `yaml:"name"`
		Labels map[string]string `yaml:"labels"`
	}
	job struct {
		APIVersion string  `yaml:"apiVersion"`
		Kind       string  `yaml:"kind"`
		Metadata   meta    `yaml:"metadata"`
		Spec       jobSpec `yaml:"spec"`
	}
	jobSpec struct {
		CompletionMode          string            `yaml:"completionMode"`
		Completions             *int              `yaml:"completions"`
		Parallelism             *int              `yaml:"parallelism"`
		BackoffLimit            *int              `yaml:"backoffLimit"`
		BackoffLimitPerIndex    *int              `yaml:"backoffLimitPerIndex"`
		MaxFailedIndexes        *int              `yaml:"maxFailedIndexes"`
		PodFailurePolicy        *podFailurePolicy `yaml:"podFailurePolicy"`
		TTLSecondsAfterFinished *int              `yaml:"ttlSecondsAfterFinished"`
		Template                struct {
			Metadata meta    `yaml:"metadata"`
			Spec     podSpec `yaml:"spec"`
		} `yaml:"template"`
	}
	podFailurePolicy struct {
		Rules []struct {
			Action      string `yaml:"action"`
			OnExitCodes *struct {
				ContainerName string `yaml:"containerName"`
				Operator      string `yaml:"operator"`
				Values        []int  `yaml:"values"`
			} `yaml:"onExitCodes"`
			OnPodConditions []struct {
				Type   string `yaml:"type"`
				Status string `yaml:"status"`
			} `yaml:"onPodConditions"`
		} `yaml:"rules"`
	}
	podSpec struct {
		RestartPolicy   string `yaml:"restartPolicy"`
		SecurityContext *struct {
			RunAsNonRoot bool `yaml:"runAsNonRoot"`
			RunAsUser    int  `yaml:"runAsUser"`
			RunAsGroup   int  `yaml:"runAsGroup"`
			FSGroup      int  `yaml:"fsGroup"`
		} `yaml:"securityContext"`
		Containers []container `yaml:"containers"`
		Volumes    []struct {
			Name                  string `yaml:"name"`
			PersistentVolumeClaim *struct {
				ClaimName string `yaml:"claimName"`
			} `yaml:"persistentVolumeClaim"`
			ConfigMap *struct {
				Name string `yaml:"name"`
			} `yaml:"configMap"`
		} `yaml:"volumes"`
	}
	container struct {
		Name    string `yaml:"name"`
		Image   string `yaml:"image"`
		Command []string
		Args    []string `yaml:"args"`
		Env     []struct {
			Name      string `yaml:"name"`
			Value     string `yaml:"value"`
			ValueFrom *struct {
				FieldRef *struct {
					FieldPath string `yaml:"fieldPath"`
				} `yaml:"fieldRef"`
			} `yaml:"valueFrom"`
		} `yaml:"env"`
		VolumeMounts []struct {
			Name      string `yaml:"name"`
			MountPath string `yaml:"mountPath"`
			ReadOnly  bool   `yaml:"readOnly"`
		} `yaml:"volumeMounts"`
		Resources struct {
			Requests map[string]string `yaml:"requests"`
			Limits   map[string]string `yaml:"limits"`
		} `yaml:"resources"`
	}
	pvc struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string `yaml:"kind"`
		Metadata   meta   `yaml:"metadata"`
		Spec       struct {
			AccessModes []string `yaml:"accessModes"`
			Resources   struct {
				Requests map[string]string `yaml:"requests"`
			} `yaml:"resources"`
		} `yaml:"spec"`
	}
)

// decode reads one manifest strictly into v.
func decode(t *testing.T, file string, v any) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

// resultsMount is where both Jobs mount the results volume, and the claim.
const (
	resultsMount = "/results"
	resultsClaim = "extractbench-results"
)

// checkPod checks what both Jobs' pods need: restartPolicy Never, one
// container running a shell script, the results claim mounted at
// resultsMount. It returns the container.
func checkPod(t *testing.T, name string, spec podSpec) container {
	t.Helper()
	if spec.RestartPolicy != "Never" {
		t.Errorf("%s: restartPolicy %q, want Never (required by backoffLimitPerIndex and podFailurePolicy)", name, spec.RestartPolicy)
	}
	if len(spec.Containers) != 1 {
		t.Fatalf("%s: %d containers, want 1", name, len(spec.Containers))
	}
	c := spec.Containers[0]
	if !slices.Equal(c.Command, []string{"/bin/sh", "-c"}) || len(c.Args) != 1 || c.Image == "" {
		t.Fatalf("%s: container runs %q %q (image %q), want /bin/sh -c SCRIPT", name, c.Command, c.Args, c.Image)
	}
	claimed := map[string]string{}
	for _, v := range spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			claimed[v.Name] = v.PersistentVolumeClaim.ClaimName
		}
	}
	mounted := false
	for _, m := range c.VolumeMounts {
		mounted = mounted || (m.MountPath == resultsMount && claimed[m.Name] == resultsClaim && !m.ReadOnly)
	}
	if !mounted {
		t.Errorf("%s: the claim %s is not mounted writable at %s", name, resultsClaim, resultsMount)
	}
	return c
}

func TestShardsJob(t *testing.T) {
	var j job
	decode(t, "shards-job.yaml", &j)
	s := j.Spec
	switch {
	case j.APIVersion != "batch/v1" || j.Kind != "Job":
		t.Fatalf("shards-job.yaml is %s %s, want batch/v1 Job", j.APIVersion, j.Kind)
	case s.CompletionMode != "Indexed":
		t.Errorf("completionMode %q, want Indexed (JOB_COMPLETION_INDEX per pod)", s.CompletionMode)
	case s.Completions == nil || *s.Completions < 1:
		t.Fatalf("completions %v, want the shard count", s.Completions)
	case s.Parallelism == nil || *s.Parallelism < 1 || *s.Parallelism > *s.Completions:
		t.Errorf("parallelism %v, want 1..completions (%d)", s.Parallelism, *s.Completions)
	case s.BackoffLimitPerIndex == nil || *s.BackoffLimitPerIndex < 1:
		t.Errorf("backoffLimitPerIndex %v, want ≥ 1: a failed shard is retried alone", s.BackoffLimitPerIndex)
	case s.BackoffLimit != nil:
		t.Errorf("backoffLimit is set; with backoffLimitPerIndex it would cap the retries of all shards together")
	}
	failIndexOn2 := false
	if p := s.PodFailurePolicy; p != nil {
		for _, r := range p.Rules {
			if r.Action == "FailIndex" && r.OnExitCodes != nil && r.OnExitCodes.Operator == "In" && slices.Contains(r.OnExitCodes.Values, 2) {
				failIndexOn2 = true
			}
		}
	}
	if !failIndexOn2 {
		t.Errorf("podFailurePolicy does not fail the index on exit 2 (a configuration error a retry cannot fix)")
	}
	c := checkPod(t, "shards-job.yaml", s.Template.Spec)
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			env[e.Name] = "fieldRef:" + e.ValueFrom.FieldRef.FieldPath
		}
	}
	if env["JOB_COMPLETIONS"] != strconv.Itoa(*s.Completions) {
		t.Errorf("env JOB_COMPLETIONS = %q, want spec.completions %d: extractbench reads the shard count from it", env["JOB_COMPLETIONS"], *s.Completions)
	}
	if env["RUN"] != "fieldRef:metadata.labels['batch.kubernetes.io/job-name']" {
		t.Errorf("env RUN = %q, want the Job's name from the pod's label", env["RUN"])
	}
	script := c.Args[0]
	for _, want := range []string{"JOB_COMPLETION_INDEX", "-resume", resultsMount + "/"} {
		if !strings.Contains(script, want) {
			t.Errorf("the pod's script does not use %s:\n%s", want, script)
		}
	}

	// The script, run by sh against a stand-in extractbench, with the
	// mount moved to a temporary directory.
	root := t.TempDir()
	script = strings.ReplaceAll(script, resultsMount+"/", root+"/")
	runPod := func(rc string) (string, int) {
		out, code := runScript(t, script, rc, "JOB_COMPLETION_INDEX=5", "JOB_COMPLETIONS="+env["JOB_COMPLETIONS"], "RUN=night-1")
		return out, code
	}
	out, code := runPod("0")
	if want := "run -quiet -protocol /protocol/protocol.yaml -out " + root + "/night-1/shard-5"; out != want || code != 0 {
		t.Errorf("first attempt ran %q (exit %d), want %q", out, code, want)
	}
	if err := os.MkdirAll(filepath.Join(root, "night-1", "shard-5"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "night-1", "shard-5", "results.db"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out, code = runPod("3")
	if want := "run -quiet -resume " + root + "/night-1/shard-5"; out != want || code != 3 {
		t.Errorf("a retried pod ran %q (exit %d), want %q and its exit 3 (so that the index is retried)", out, code, want)
	}
	if _, code := runPod("1"); code != 0 {
		t.Errorf("a shard whose own verdict failed exits %d, want 0: the merged run's verdict is the one that counts", code)
	}
	if _, code := runPod("2"); code != 2 {
		t.Errorf("a configuration error exits %d, want 2 (FailIndex)", code)
	}
}

func TestMergeJob(t *testing.T) {
	var j job
	decode(t, "merge-job.yaml", &j)
	if j.APIVersion != "batch/v1" || j.Kind != "Job" || j.Spec.CompletionMode == "Indexed" {
		t.Fatalf("merge-job.yaml is %s %s %s, want a batch/v1 Job (one pod)", j.APIVersion, j.Kind, j.Spec.CompletionMode)
	}
	c := checkPod(t, "merge-job.yaml", j.Spec.Template.Spec)
	var shards job
	decode(t, "shards-job.yaml", &shards)
	run := ""
	for _, e := range c.Env {
		if e.Name == "RUN" {
			run = e.Value
		}
	}
	if run != shards.Metadata.Name {
		t.Errorf("merge RUN = %q, want the shards Job's name %q", run, shards.Metadata.Name)
	}
	root := t.TempDir()
	script := strings.ReplaceAll(c.Args[0], resultsMount+"/", root+"/")
	out, code := runScript(t, script, "0", "RUN="+run)
	want := "merge -out " + root + "/" + run + "/merged " + root + "/" + run + "/shard-*\n" +
		"export -partitioned -dataset " + root + "/dataset " + root + "/" + run + "/merged"
	if out != want || code != 0 {
		t.Errorf("merge pod ran (exit %d):\n%s\nwant:\n%s", code, out, want)
	}
	if out, code := runScript(t, script, "3", "RUN="+run); code != 3 || strings.Contains(out, "export") {
		t.Errorf("with shards missing (merge exit 3) the pod exits %d and ran:\n%s\nwant exit 3 and no export", code, out)
	}
}

func TestResultsClaim(t *testing.T) {
	var c pvc
	decode(t, "results-pvc.yaml", &c)
	if c.APIVersion != "v1" || c.Kind != "PersistentVolumeClaim" || c.Metadata.Name != resultsClaim {
		t.Fatalf("results-pvc.yaml is %s %s %s", c.APIVersion, c.Kind, c.Metadata.Name)
	}
	if !slices.Contains(c.Spec.AccessModes, "ReadWriteMany") || c.Spec.Resources.Requests["storage"] == "" {
		t.Errorf("the claim is %v with %v: shards on several nodes need ReadWriteMany and a size", c.Spec.AccessModes, c.Spec.Resources.Requests)
	}
}

// runScript runs a pod's script with sh, an extractbench on the PATH that
// logs its arguments (one line per call) and exits rc, and env; it returns
// the calls and the script's exit code.
func runScript(t *testing.T, script, rc string, env ...string) (string, int) {
	t.Helper()
	bin := t.TempDir()
	log := filepath.Join(bin, "calls")
	fake := "#!/bin/sh\necho \"$*\" >> " + log + "\nexit " + rc + "\n"
	if err := os.WriteFile(filepath.Join(bin, "extractbench"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Env = append([]string{"PATH=" + bin + ":/usr/bin:/bin"}, env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("sh: %v: %s", err, stderr.String())
	}
	calls, _ := os.ReadFile(log)
	return strings.TrimSpace(string(calls)), code
}
