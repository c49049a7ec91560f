// Package container holds extractbench's Containerfile (a static binary on
// no base image) and the test that keeps it, scripts/image.sh (which builds
// it) and the Kubernetes manifests (which run it) in agreement: the image's
// name, its user, its entrypoint and the build flags that make the binary
// static. scripts/image.sh builds the image and checks the binary itself.
package container
