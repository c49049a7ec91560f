//go:build unix

package report

import (
	"os/exec"
	"syscall"
)

// killGroupOnCancel makes the browser the leader of its own process group
// and has a cancel kill the whole group: its renderers and GPU process
// would otherwise outlive it, holding its pipes open.
func killGroupOnCancel(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
