package cudart

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// maxAccessedByQuery bounds MemRangeInfo's accessed-by list: far past any machine's devices.
const maxAccessedByQuery = 1024

// MemRangeGetAttributes reads several attributes of a managed range in one call
// (cudaMemRangeGetAttributes): attribute attrs[i] into out[i], which holds one value, or
// several for backend.RangeAccessedBy.
func (r *Runtime) MemRangeGetAttributes(p DevicePtr, n uint64, attrs []backend.RangeAttr, out [][]int32) error {
	if len(attrs) == 0 || len(attrs) != len(out) {
		return r.newError("cudaMemRangeGetAttributes", codeInvalidValue)
	}
	data := make([]uintptr, len(attrs))
	sizes := make([]uintptr, len(attrs))
	kinds := make([]int32, len(attrs))
	// The runtime writes through data's pointers: the Go memory they name stays put for the
	// call (data itself holds uintptrs, which the collector ignores).
	var pin runtime.Pinner
	defer pin.Unpin()
	for i, o := range out {
		if len(o) == 0 {
			return r.newError("cudaMemRangeGetAttributes", codeInvalidValue)
		}
		pin.Pin(&o[0])
		data[i], sizes[i], kinds[i] = uintptr(unsafe.Pointer(&o[0])), uintptr(4*len(o)), int32(attrs[i])
	}
	return r.call(fnMemRangeGetAttributes, uintptr(unsafe.Pointer(&data[0])), uintptr(unsafe.Pointer(&sizes[0])),
		uintptr(unsafe.Pointer(&kinds[0])), uintptr(len(attrs)), uintptr(p), uintptr(n))
}

// memRangeInfo reads every attribute of a managed range with one cudaMemRangeGetAttributes:
// the locations as type and id on 13.0 (which tell host NUMA nodes apart), as the int form
// (a device, cudaCpuDeviceId, cudaInvalidDeviceId) before.
func (r *Runtime) memRangeInfo(p DevicePtr, n uint64, maxAccessedBy int) (backend.RangeInfo, error) {
	var info backend.RangeInfo
	if maxAccessedBy < 1 || maxAccessedBy > maxAccessedByQuery {
		return info, &cudaerr.Error{Op: "cudaMemRangeGetAttributes", Code: cudaerr.InvalidValue,
			Message: fmt.Sprintf("room for %d accessed-by devices: want 1 to %d", maxAccessedBy, maxAccessedByQuery)}
	}
	by := make([]int32, maxAccessedBy)
	var readMostly, prefType, prefID, lastType, lastID [1]int32
	if r.major >= 13 {
		attrs := []backend.RangeAttr{backend.RangeReadMostly, backend.RangePreferredLocationType, backend.RangePreferredLocationID,
			backend.RangeLastPrefetchLocationType, backend.RangeLastPrefetchLocationID, backend.RangeAccessedBy}
		if err := r.MemRangeGetAttributes(p, n, attrs, [][]int32{readMostly[:], prefType[:], prefID[:], lastType[:], lastID[:], by}); err != nil {
			return info, err
		}
		info.Preferred = typedLocation(prefType[0], prefID[0])
		info.LastPrefetch = typedLocation(lastType[0], lastID[0])
	} else {
		attrs := []backend.RangeAttr{backend.RangeReadMostly, backend.RangePreferredLocation, backend.RangeLastPrefetchLocation, backend.RangeAccessedBy}
		if err := r.MemRangeGetAttributes(p, n, attrs, [][]int32{readMostly[:], prefID[:], lastID[:], by}); err != nil {
			return info, err
		}
		info.Preferred = legacyLocation(prefID[0])
		info.LastPrefetch = legacyLocation(lastID[0])
	}
	info.ReadMostly = readMostly[0] != 0
	for _, d := range by {
		if d >= 0 || d == backend.CPUDevice {
			info.AccessedBy = append(info.AccessedBy, d)
		}
	}
	return info, nil
}

// typedLocation is a location the runtime reported as type and id: the id counts only for a
// device or a host NUMA node.
func typedLocation(t, id int32) backend.Location {
	switch backend.LocationType(t) {
	case backend.LocationDevice, backend.LocationHostNUMA:
		return backend.Location{Type: backend.LocationType(t), ID: id}
	case backend.LocationHost, backend.LocationHostNUMACurrent:
		return backend.Location{Type: backend.LocationType(t)}
	}
	return backend.Location{}
}

// legacyLocation is a location in the int form: a device, cudaCpuDeviceId, or none.
func legacyLocation(v int32) backend.Location {
	switch {
	case v == backend.CPUDevice:
		return backend.Location{Type: backend.LocationHost}
	case v >= 0:
		return backend.Location{Type: backend.LocationDevice, ID: v}
	}
	return backend.Location{}
}

// hostNUMABefore13 refuses a host NUMA location on a runtime whose managed-memory calls take
// an int device, which cannot name one.
func (r *Runtime) hostNUMABefore13(op string, loc backend.Location) error {
	if r.major >= 13 || (loc.Type != backend.LocationHostNUMA && loc.Type != backend.LocationHostNUMACurrent) {
		return nil
	}
	return &cudaerr.Error{Op: op, Code: cudaerr.NotSupported,
		Message: fmt.Sprintf("host NUMA locations need the CUDA 13.0 runtime's cudaMemLocation form; this runtime is %d.x", r.major)}
}

func (d *device) MemRangeInfo(p DevicePtr, n uint64, maxAccessedBy int) (backend.RangeInfo, error) {
	return d.rt.memRangeInfo(p, n, maxAccessedBy)
}

var _ backend.MemRangeDevice = (*device)(nil)
