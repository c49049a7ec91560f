package process

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// engineSysProcAttr puts a started engine in its own process group and
// has the kernel send its shell SIGHUP when extractbench dies, which the
// shell answers by killing the group (see engineScript).
func engineSysProcAttr() *syscall.SysProcAttr {
	unignoreHangup.Do(unignoreHUP)
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGHUP}
}

var unignoreHangup sync.Once

// unignoreHUP: under nohup (SIGHUP ignored when extractbench started) every
// child would inherit the ignored SIGHUP, and a POSIX shell may not trap a
// signal ignored on its entry: engineScript's trap would silently not be set,
// so a killed extractbench would leave its engine running. Catching SIGHUP
// here instead (a handler, not SIG_IGN: the kernel gives a child the default
// action on exec) lets the shell trap it. The channel is never read and
// signal.Notify never blocks on it: extractbench still ignores a hangup, as
// nohup asked.
func unignoreHUP() {
	if signal.Ignored(syscall.SIGHUP) {
		signal.Notify(make(chan os.Signal, 1), syscall.SIGHUP)
	}
}
