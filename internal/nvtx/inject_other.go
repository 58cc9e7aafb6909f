//go:build !linux

package nvtx

// Without the Linux loader no tool attaches: every call is a no-op.

func load() {}

// Push opens a range on the calling thread (a no-op here).
func Push(string) {}

// Pop closes the calling thread's innermost range (a no-op here).
func Pop() {}

// Mark records an instant (a no-op here).
func Mark(string) {}

// Start opens a process range (a no-op here).
func Start(string) uint64 { return 0 }

// End closes a range Start opened (a no-op here).
func End(uint64) {}

// NameThread names an OS thread (a no-op here).
func NameThread(int, string) {}

// NameCurrentThread names the calling OS thread (a no-op here).
func NameCurrentThread(string) {}
