package remote

// CallsForTest is how many calls (not posts) the backend has made to its worker.
func CallsForTest(b *Backend) uint64 { return b.calls.Load() }
