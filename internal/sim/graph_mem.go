package sim

import (
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// The memory of allocation nodes. The simulator reserves a node's memory when the node is
// added (its address is fixed from then on) and keeps it while a graph or executable graph
// holds the node: reserved memory is that of every such node, used memory that of the
// allocations a launch has made, freed since or not, as the runtime keeps a freed allocation's
// memory mapped for the graph's next launch. Nothing reserved is unused while a node holds it,
// so a trim has nothing to give back.

// graphMemHigh is the high watermarks of graph memory; guarded by graphState.mu.
type graphMemHigh struct {
	used, reserved uint64
}

// memLocked adds up the graph memory used and reserved now; the caller holds gs.mu.
func (gs *graphState) memLocked() (used, reserved uint64) {
	for _, a := range gs.allocs {
		reserved += a.size
		if a.live || a.backed {
			used += a.size
		}
	}
	return used, reserved
}

// noteMemLocked raises the high watermarks to the current figures; the caller holds gs.mu.
func (gs *graphState) noteMemLocked() {
	used, reserved := gs.memLocked()
	gs.high.used = max(gs.high.used, used)
	gs.high.reserved = max(gs.high.reserved, reserved)
}

// GraphMemTrim checks the device: the simulator never holds unused graph memory.
func (d *device) GraphMemTrim() error { return d.alive("cudaDeviceGraphMemTrim") }

// GraphMemAttribute reads a graph memory figure.
func (d *device) GraphMemAttribute(attr backend.GraphMemAttr) (uint64, error) {
	const op = "cudaDeviceGetGraphMemAttribute"
	if err := d.alive(op); err != nil {
		return 0, err
	}
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.init()
	gs.noteMemLocked()
	used, reserved := gs.memLocked()
	switch attr {
	case backend.GraphMemUsedCurrent:
		return used, nil
	case backend.GraphMemUsedHigh:
		return gs.high.used, nil
	case backend.GraphMemReservedCurrent:
		return reserved, nil
	case backend.GraphMemReservedHigh:
		return gs.high.reserved, nil
	}
	return 0, d.fail(op, cudaerr.InvalidValue, "unknown graph memory attribute %d", attr)
}

// SetGraphMemAttribute resets a high watermark to the current figure (CUDA takes only 0).
func (d *device) SetGraphMemAttribute(attr backend.GraphMemAttr, value uint64) error {
	const op = "cudaDeviceSetGraphMemAttribute"
	if err := d.alive(op); err != nil {
		return err
	}
	if value != 0 {
		return d.fail(op, cudaerr.InvalidValue, "%s can only be reset, to 0, not set to %d", attr, value)
	}
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.init()
	switch attr {
	case backend.GraphMemUsedHigh:
		gs.high.used = 0
	case backend.GraphMemReservedHigh:
		gs.high.reserved = 0
	case backend.GraphMemUsedCurrent, backend.GraphMemReservedCurrent:
		return d.fail(op, cudaerr.InvalidValue, "%s cannot be set, only read", attr)
	default:
		return d.fail(op, cudaerr.InvalidValue, "unknown graph memory attribute %d", attr)
	}
	gs.noteMemLocked()
	return nil
}
