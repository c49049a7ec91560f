// Package kubernetes holds extractbench's Kubernetes manifests (an Indexed
// Job that measures one shard of the corpus per pod, a Job that merges the
// shards, the results volume) and the test that keeps them valid: the
// fields that matter, checked against the batch/v1 names, and the pods'
// shell run against a stand-in extractbench. README.md is the recipe.
package kubernetes
