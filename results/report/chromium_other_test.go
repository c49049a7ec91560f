//go:build !unix

package report

import "os/exec"

// killGroupOnCancel leaves the default cancel (the browser alone) where
// process groups are not Unix's; cmd.WaitDelay still closes its pipes.
func killGroupOnCancel(cmd *exec.Cmd) {}
