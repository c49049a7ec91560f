package main

import (
	"fmt"

	"github.com/extractbench/extractbench"
)

// The environment a Kubernetes Indexed Job gives each pod: the controller
// sets JOB_COMPLETION_INDEX (0..completions-1); the count is not in the
// pod's environment, so the Job's manifest sets envShardCount to its
// spec.completions (deploy/kubernetes/shards-job.yaml).
const (
	envShardIndex = "JOB_COMPLETION_INDEX"
	envShardCount = "JOB_COMPLETIONS"
)

// shardOf is the shard a run measures: -shard I/N when given, else
// $JOB_COMPLETION_INDEX of $JOB_COMPLETIONS when the index is set, else
// none (the whole corpus). A bad value is a usage error: exit 2, nothing
// created.
func shardOf(spec string, given bool, getenv func(string) string) (*extractbench.Shard, error) {
	if given {
		sh, err := extractbench.ParseShard(spec)
		if err != nil {
			return nil, &usageError{msg: "run: -shard: " + err.Error()}
		}
		return &sh, nil
	}
	index := getenv(envShardIndex)
	if index == "" {
		return nil, nil
	}
	count := getenv(envShardCount)
	if count == "" {
		return nil, &usageError{msg: fmt.Sprintf("run: %s=%s is set but %s is not: Kubernetes gives the index only; set %s to the Job's completions (deploy/kubernetes/shards-job.yaml does), or pass -shard I/N",
			envShardIndex, index, envShardCount, envShardCount)}
	}
	sh, err := extractbench.NewShard(index, count)
	if err != nil {
		return nil, &usageError{msg: fmt.Sprintf("run: %s=%s, %s=%s: %v", envShardIndex, index, envShardCount, count, err)}
	}
	return &sh, nil
}
