package sim

import (
	"math/bits"
	"slices"
	"unsafe"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// pitchAlign is the row alignment MallocPitch gives, the device's texture alignment as on
// the GPUs gpuactor targets.
const pitchAlign = 512

// span2D is the bytes a 2D region of height rows of width bytes, pitch apart, reaches from
// its start: the last row ends at (height-1)*pitch + width. ok is false when that overflows.
func span2D(pitch, width, height uint64) (uint64, bool) {
	if height == 0 || width == 0 {
		return 0, true
	}
	hi, lo := bits.Mul64(height-1, pitch)
	if hi != 0 {
		return 0, false
	}
	n, carry := bits.Add64(lo, width, 0)
	return n, carry == 0
}

// MallocPitch allocates height rows of width bytes each, pitch bytes apart, the pitch being
// width rounded up to pitchAlign.
func (d *device) MallocPitch(width, height uint64) (backend.DevicePtr, uint64, error) {
	const op = "cudaMallocPitch"
	if err := d.alive(op); err != nil {
		return 0, 0, err
	}
	if width == 0 || height == 0 {
		return 0, 0, nil
	}
	if width > 1<<31-1 {
		return 0, 0, d.fail(op, cudaerr.InvalidValue, "a width of %d bytes is over the device's maximum pitch of %d", width, 1<<31-1)
	}
	pitch := (width + pitchAlign - 1) &^ (pitchAlign - 1)
	hi, size := bits.Mul64(pitch, height)
	if hi != 0 {
		return 0, 0, d.fail(op, cudaerr.InvalidValue, "%d rows of %d bytes overflow", height, pitch)
	}
	p, err := d.Malloc(size)
	if err != nil {
		return 0, 0, err
	}
	return p, pitch, nil
}

// check2D checks a 2D copy's or memset's shape the way the runtime does, before anything
// is queued: each pitch holds a row, and no span overflows.
func (d *device) check2D(op string, width, height uint64, pitches ...uint64) error {
	for _, p := range pitches {
		if width > p {
			return d.fail(op, cudaerr.InvalidPitchValue, "rows of %d bytes do not fit a pitch of %d", width, p)
		}
		if _, ok := span2D(p, width, height); !ok {
			return d.fail(op, cudaerr.InvalidValue, "%d rows of pitch %d overflow", height, p)
		}
	}
	return nil
}

// rows2D resolves a 2D region of this device's memory: the span from its first row's start
// to its last row's end.
func (d *device) rows2D(p backend.DevicePtr, pitch, width, height uint64) ([]byte, string) {
	n, _ := span2D(pitch, width, height)
	return d.resolve(p, n)
}

// peerRows2D is rows2D for memory of any device of the simulator (a device-to-device copy
// may name a peer's, under unified addressing).
func (d *device) peerRows2D(p backend.DevicePtr, pitch, width, height uint64) ([]byte, string) {
	n, _ := span2D(pitch, width, height)
	return d.resolveAny(p, n)
}

// copyRows copies height rows of width bytes between two spans whose rows are the pitches
// apart.
func copyRows(to []byte, dpitch uint64, from []byte, spitch, width, height uint64) {
	for y := uint64(0); y < height; y++ {
		copy(to[y*dpitch:y*dpitch+width], from[y*spitch:y*spitch+width])
	}
}

// begin2D makes the checks every 2D copy starts with: the device, the stream, and the shape
// against both pitches. A nil stream and a nil error mean there is nothing to copy.
func (d *device) begin2D(op string, s backend.Stream, width, height, dpitch, spitch uint64) (*stream, error) {
	if err := d.alive(op); err != nil {
		return nil, err
	}
	st, err := d.ownStream(op, s)
	if err != nil || width == 0 || height == 0 {
		return nil, err
	}
	if err := d.check2D(op, width, height, dpitch, spitch); err != nil {
		return nil, err
	}
	return st, nil
}

// Copy2DDtoD copies height rows of width bytes between device memory on s.
func (d *device) Copy2DDtoD(dst backend.DevicePtr, dpitch uint64, src backend.DevicePtr, spitch, width, height uint64, s backend.Stream) error {
	const op = "cudaMemcpy2DAsync"
	st, err := d.begin2D(op, s, width, height, dpitch, spitch)
	if st == nil {
		return err
	}
	const what = "2D device-to-device copy"
	check := func() ([]byte, []byte, string) {
		from, detail := d.peerRows2D(src, spitch, width, height)
		if detail != "" {
			return nil, nil, what + " source: " + detail
		}
		to, detail := d.peerRows2D(dst, dpitch, width, height)
		if detail != "" {
			return nil, nil, what + " destination: " + detail
		}
		return to, from, ""
	}
	if _, _, detail := check(); detail != "" {
		return d.fail(op, cudaerr.InvalidValue, "%s", detail)
	}
	d.submit(st, &task{name: what, run: func() {
		to, from, detail := check()
		if detail != "" {
			d.setFault(cudaerr.IllegalAddress, detail)
			return
		}
		copyRows(to, dpitch, from, spitch, width, height)
	}})
	return nil
}

// Copy2DHtoD copies height rows of width bytes from host memory to the device on s. From
// pageable memory the rows are staged at once, so the caller may reuse src on return.
func (d *device) Copy2DHtoD(dst backend.DevicePtr, dpitch uint64, src unsafe.Pointer, spitch, width, height uint64, s backend.Stream) error {
	const op = "cudaMemcpy2DAsync"
	st, err := d.begin2D(op, s, width, height, dpitch, spitch)
	if st == nil {
		return err
	}
	if src == nil {
		return d.fail(op, cudaerr.InvalidValue, "2D host-to-device copy from a nil host pointer")
	}
	const what = "2D host-to-device copy destination"
	if _, detail := d.rows2D(dst, dpitch, width, height); detail != "" {
		return d.fail(op, cudaerr.InvalidValue, "%s: %s", what, detail)
	}
	n, _ := span2D(spitch, width, height)
	from := unsafe.Slice((*byte)(src), n)
	if !d.b.host.pinned(src, n) {
		from = slices.Clone(from)
	}
	d.submit(st, &task{name: "2D host-to-device copy", run: func() {
		to, detail := d.rows2D(dst, dpitch, width, height)
		if detail != "" {
			d.setFault(cudaerr.IllegalAddress, what+": "+detail)
			return
		}
		copyRows(to, dpitch, from, spitch, width, height)
	}})
	return nil
}

// Copy2DDtoH copies height rows of width bytes from the device to host memory on s. Into
// pageable memory it returns once the copy is done; into pinned memory at once.
func (d *device) Copy2DDtoH(dst unsafe.Pointer, dpitch uint64, src backend.DevicePtr, spitch, width, height uint64, s backend.Stream) error {
	const op = "cudaMemcpy2DAsync"
	st, err := d.begin2D(op, s, width, height, dpitch, spitch)
	if st == nil {
		return err
	}
	if dst == nil {
		return d.fail(op, cudaerr.InvalidValue, "2D device-to-host copy to a nil host pointer")
	}
	const what = "2D device-to-host copy source"
	if _, detail := d.rows2D(src, spitch, width, height); detail != "" {
		return d.fail(op, cudaerr.InvalidValue, "%s: %s", what, detail)
	}
	n, _ := span2D(dpitch, width, height)
	to := unsafe.Slice((*byte)(dst), n)
	pinned := d.b.host.pinned(dst, n)
	seq := d.submit(st, &task{name: "2D device-to-host copy", run: func() {
		from, detail := d.rows2D(src, spitch, width, height)
		if detail != "" {
			d.setFault(cudaerr.IllegalAddress, what+": "+detail)
			return
		}
		copyRows(to, dpitch, from, spitch, width, height)
	}})
	if !pinned {
		st.wait(seq)
		return d.alive(op)
	}
	return nil
}

// Memset2D sets width bytes of each of height rows at p, pitch apart, to value on s.
func (d *device) Memset2D(p backend.DevicePtr, pitch uint64, value byte, width, height uint64, s backend.Stream) error {
	const op = "cudaMemset2DAsync"
	if err := d.alive(op); err != nil {
		return err
	}
	st, err := d.ownStream(op, s)
	if err != nil || width == 0 || height == 0 {
		return err
	}
	if err := d.check2D(op, width, height, pitch); err != nil {
		return err
	}
	const what = "2D memset destination"
	if _, detail := d.rows2D(p, pitch, width, height); detail != "" {
		return d.fail(op, cudaerr.InvalidValue, "%s: %s", what, detail)
	}
	d.submit(st, &task{name: "2D memset", run: func() {
		to, detail := d.rows2D(p, pitch, width, height)
		if detail != "" {
			d.setFault(cudaerr.IllegalAddress, what+": "+detail)
			return
		}
		for y := uint64(0); y < height; y++ {
			row := to[y*pitch : y*pitch+width]
			for i := range row {
				row[i] = value
			}
		}
	}})
	return nil
}
