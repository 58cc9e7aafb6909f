package sim

import "syscall"

// physicalRAM is the machine's memory in bytes, or 0 where it cannot be read.
func physicalRAM() uint64 {
	var info syscall.Sysinfo_t
	if syscall.Sysinfo(&info) != nil {
		return 0
	}
	return uint64(info.Totalram) * uint64(info.Unit)
}
