//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// killGroup makes cmd the leader of a process group of its own and has a cancelled or timed
// out run kill the whole group, the processes a sample starts (simpleIPC's) included.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
