package remote

import (
	"github.com/gpuactor/gpuactor/internal/backend"
)

// MallocAsync queues a stream-ordered allocation on s.
func (d *Device) MallocAsync(size uint64, s backend.Stream) (backend.DevicePtr, error) {
	v, err := d.val(mMallocAsync, size, uint64(s))
	return backend.DevicePtr(v), err
}

// MallocFromPoolAsync queues a stream-ordered allocation from pool on s.
func (d *Device) MallocFromPoolAsync(size uint64, pool backend.MemPool, s backend.Stream) (backend.DevicePtr, error) {
	v, err := d.val(mMallocFromPoolAsync, size, uint64(pool), uint64(s))
	return backend.DevicePtr(v), err
}

// FreeAsync queues a stream-ordered free on s.
func (d *Device) FreeAsync(p backend.DevicePtr, s backend.Stream) error {
	return d.postVoid(mFreeAsync, s, uint64(p), uint64(s))
}

// MemPoolCreate makes a memory pool.
func (d *Device) MemPoolCreate(props backend.PoolProps) (backend.MemPool, error) {
	e := request(mMemPoolCreate)
	e.location(props.Location)
	e.u64(uint64(props.HandleTypes))
	e.u64(props.MaxSize)
	r, err := d.do(e)
	if err != nil {
		return 0, err
	}
	return backend.MemPool(r.u64()), nil
}

// MemPoolDestroy destroys a pool.
func (d *Device) MemPoolDestroy(pool backend.MemPool) error {
	return d.void(mMemPoolDestroy, uint64(pool))
}

// DefaultMemPool is the device's default pool.
func (d *Device) DefaultMemPool() (backend.MemPool, error) {
	v, err := d.val(mDefaultMemPool)
	return backend.MemPool(v), err
}

// CurrentMemPool is the device's current pool.
func (d *Device) CurrentMemPool() (backend.MemPool, error) {
	v, err := d.val(mCurrentMemPool)
	return backend.MemPool(v), err
}

// SetCurrentMemPool sets the device's current pool.
func (d *Device) SetCurrentMemPool(pool backend.MemPool) error {
	return d.void(mSetCurrentMemPool, uint64(pool))
}

// MemPoolSetAttribute sets a pool attribute.
func (d *Device) MemPoolSetAttribute(pool backend.MemPool, attr backend.PoolAttr, value uint64) error {
	return d.void(mMemPoolSetAttribute, uint64(pool), uint64(attr), value)
}

// MemPoolGetAttribute reads a pool attribute.
func (d *Device) MemPoolGetAttribute(pool backend.MemPool, attr backend.PoolAttr) (uint64, error) {
	return d.val(mMemPoolGetAttribute, uint64(pool), uint64(attr))
}

// MemPoolTrimTo releases a pool's unused memory down to keep bytes.
func (d *Device) MemPoolTrimTo(pool backend.MemPool, keep uint64) error {
	return d.void(mMemPoolTrimTo, uint64(pool), keep)
}

// MemPoolSetAccess sets device ordinal's access to pool.
func (d *Device) MemPoolSetAccess(pool backend.MemPool, ordinal int, flags backend.AccessFlags) error {
	return d.void(mMemPoolSetAccess, uint64(pool), uint64(int64(ordinal)), uint64(flags))
}

// MemPoolGetAccess is device ordinal's access to pool.
func (d *Device) MemPoolGetAccess(pool backend.MemPool, ordinal int) (backend.AccessFlags, error) {
	v, err := d.val(mMemPoolGetAccess, uint64(pool), uint64(int64(ordinal)))
	return backend.AccessFlags(v), err
}

// MallocManaged allocates managed memory; the parent cannot address it (ManagedHost refuses).
func (d *Device) MallocManaged(size uint64, flags uint32) (backend.DevicePtr, error) {
	v, err := d.val(mMallocManaged, size, uint64(flags))
	return backend.DevicePtr(v), err
}

// MemPrefetch queues a prefetch of managed memory on s.
func (d *Device) MemPrefetch(p backend.DevicePtr, n uint64, loc backend.Location, s backend.Stream) error {
	e := request(mMemPrefetch)
	e.u64(uint64(p))
	e.u64(n)
	e.location(loc)
	e.u64(uint64(s))
	_, err := d.do(e)
	return err
}

// MemAdvise advises the driver about managed memory.
func (d *Device) MemAdvise(p backend.DevicePtr, n uint64, advice backend.Advice, loc backend.Location) error {
	e := request(mMemAdvise)
	e.u64(uint64(p))
	e.u64(n)
	e.i64(int64(advice))
	e.location(loc)
	_, err := d.do(e)
	return err
}

// MemRangeAttribute reads a range attribute of managed memory into out.
func (d *Device) MemRangeAttribute(p backend.DevicePtr, n uint64, attr backend.RangeAttr, out []int32) error {
	e := request(mMemRangeAttribute)
	e.u64(uint64(p))
	e.u64(n)
	e.i64(int64(attr))
	e.u64(uint64(len(out)))
	r, err := d.do(e)
	if err != nil {
		return err
	}
	for i := range out {
		out[i] = int32(r.i64())
	}
	return r.err
}

// StreamAttachMem attaches managed memory to s.
func (d *Device) StreamAttachMem(s backend.Stream, p backend.DevicePtr, n uint64, flags uint32) error {
	return d.void(mStreamAttachMem, uint64(s), uint64(p), n, uint64(flags))
}
