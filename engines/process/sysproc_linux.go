package process

import "syscall"

// engineSysProcAttr puts a started engine in its own process group and
// has the kernel send its shell SIGHUP when extractbench dies, which the
// shell answers by killing the group (see engineScript).
func engineSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGHUP}
}
