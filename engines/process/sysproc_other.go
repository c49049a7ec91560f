//go:build !linux

package process

import "syscall"

// engineSysProcAttr puts a started engine in its own process group. Only
// Linux has Pdeathsig: elsewhere an engine outlives a killed extractbench,
// and a resumed run stops it through its pid file.
func engineSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
