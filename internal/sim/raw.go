package sim

import (
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// The stream queries another library's stream is checked with. Any live stream of the
// backend answers, whatever device created it, as the real runtime's do; the legacy default
// stream (0) has no device of its own and is refused.

// liveStream looks up h for query op, refusing the legacy default stream.
func (d *device) liveStream(op string, h backend.Stream) (*stream, error) {
	if err := d.alive(op); err != nil {
		return nil, err
	}
	if h == 0 {
		return nil, d.fail(op, cudaerr.InvalidResourceHandle, "stream 0 is the legacy default stream, not a stream handle")
	}
	return d.stream(op, h)
}

// StreamGetDevice is the ordinal of the device that created h.
func (d *device) StreamGetDevice(h backend.Stream) (int, error) {
	s, err := d.liveStream("cudaStreamGetDevice", h)
	if err != nil {
		return 0, err
	}
	return s.dev.ordinal, nil
}

// StreamGetFlags is h's creation flags.
func (d *device) StreamGetFlags(h backend.Stream) (uint32, error) {
	s, err := d.liveStream("cudaStreamGetFlags", h)
	if err != nil {
		return 0, err
	}
	return s.flags, nil
}

// StreamGetPriority is h's priority.
func (d *device) StreamGetPriority(h backend.Stream) (int, error) {
	s, err := d.liveStream("cudaStreamGetPriority", h)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.priority, nil
}

// DriverEntryPoint is refused: the simulator has no driver whose functions could be called.
func (d *device) DriverEntryPoint(string, int, uint64) (uintptr, error) {
	if err := d.alive("cudaGetDriverEntryPointByVersion"); err != nil {
		return 0, err
	}
	return 0, d.fail("cudaGetDriverEntryPointByVersion", cudaerr.NotSupported, "the simulator has no CUDA driver whose functions could be called")
}

var _ backend.RawDevice = (*device)(nil)
