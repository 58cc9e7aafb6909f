// Package testproc is what the tests of code that starts processes share: this process's
// children, another process's state and this process's open file descriptors, read from /proc
// (Linux; elsewhere they report nothing).
package testproc

import (
	"os"
	"strconv"
	"strings"
)

// stat is the fields of /proc/PID/stat after the command name: state, ppid, …; nil when the
// process is gone. The name may hold spaces and parentheses, so the fields start after the
// last ')'.
func stat(pid string) []string {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return nil
	}
	s := string(b)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
}

// Children lists the pids of this process's child processes, zombies (exited, not yet
// reaped) included.
func Children() []int {
	ents, _ := os.ReadDir("/proc")
	me := strconv.Itoa(os.Getpid())
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f := stat(e.Name()); len(f) > 1 && f[1] == me {
			out = append(out, pid)
		}
	}
	return out
}

// State is pid's state letter (R, S, Z…), 0 when there is no such process.
func State(pid int) byte {
	if f := stat(strconv.Itoa(pid)); len(f) > 0 {
		return f[0][0]
	}
	return 0
}

// Alive reports whether pid is a process that has not exited (a zombie has).
func Alive(pid int) bool {
	st := State(pid)
	return st != 0 && st != 'Z'
}

// OpenFDs counts this process's open file descriptors.
func OpenFDs() int {
	ents, _ := os.ReadDir("/proc/self/fd")
	return len(ents)
}

// FDTargets names what each of this process's file descriptors points at, for a leak's
// message.
func FDTargets() []string {
	ents, _ := os.ReadDir("/proc/self/fd")
	var out []string
	for _, e := range ents {
		t, _ := os.Readlink("/proc/self/fd/" + e.Name())
		out = append(out, e.Name()+"→"+t)
	}
	return out
}
