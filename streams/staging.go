package streams

import (
	"cmp"
	"context"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// Copies of Go slices go through pinned staging slots, borrowed from the device's staging
// pool (core.Staging), which every stream shares and which is capped (device.WithStagingLimit).
// The CUDA runtime copies pageable memory at a fraction of the link's speed, because it
// stages through small pinned buffers of its own, one at a time. Doing the staging here
// instead — several chunks in flight, the host side of several chunks copied at once by
// goroutines of the copy's own — overlaps the host copies with each other and with the DMA,
// and keeps the link busy. How near that comes to pinned bandwidth is bounded by the host's
// memory, which every byte crosses three times; docs/design/staging.md has the measurements
// behind the constants below.
const (
	// stagingSlotSize is a staging slot's size. A copy asks the pool for a slot for each
	// goroutine copying host memory (each holds one while it copies a chunk) and stagingSpare
	// more holding chunks queued for the link, enough that the link never runs dry while the
	// next chunks are copied; it takes what the pool can lend, at least one, and cycles its
	// chunks through them. Downloads have more copying goroutines than uploads, so they ask
	// for more: each slot an upload fills is read back by the DMA, and fewer slots keep that
	// working set smaller.
	stagingSlotSize = core.StagingSlotSize
	stagingSpare    = 8
	// A copy is cut into about stagingSplit chunks of at least stagingMinChunk bytes (at most
	// stagingSlotSize), so that copies of a few MiB still have chunks to overlap; below 1 MiB
	// the fixed costs of a chunk (queueing it, noticing it completed) outweigh the overlap.
	stagingSplit    = 8
	stagingMinChunk = 1 << 20
	// Each copying goroutine copies its own chunks, since fanning every chunk out to all of
	// them and joining them again costs more than it gains. Only where the link waits on one
	// chunk (the first of an upload, the last ones of a download, a copy of one chunk) is that
	// chunk's host copy split among them, into parts of at least stagingPart bytes, if it has
	// stagingParallelMin bytes.
	stagingParallelMin = 1 << 20
	stagingPart        = 256 << 10
	// Uploads are best with just enough copying goroutines: more memmoves beside the DMA's
	// reads of host memory slow the link. So a ring measures one goroutine's memmove rate when
	// it is made (memmoveRate) and takes enough goroutines to fill staging at stagingTarget
	// bytes a second — a little more than a PCIe gen5 x16 link carries — within
	// [stagingMinWorkers, stagingMaxWorkers], leaving two of GOMAXPROCS for the caller and the
	// device's actor. Downloads gain from every core, since the DMA's writes land in cache
	// that the copy-outs read: they get GOMAXPROCS−2, within the same bounds.
	stagingTarget     = 64e9
	stagingMinWorkers = 2
	stagingMaxWorkers = 16
	// copyOutSpin is how long a copy-out worker spins on its chunk's future before parking. A
	// chunk can wait a few DMAs behind others; parked, each chunk would pay a goroutine wake
	// and an actor hand-off before its copy-out and the next chunk's enqueue. The workers are
	// the copy's own, idle otherwise.
	copyOutSpin = 2 * time.Millisecond
)

// stagingParams is the ring's geometry: measured for the host, or another for tests.
// workers copy host memory into staging for uploads, downWorkers out of it for downloads.
// minChunk and inlineMax, when set, replace stagingMinChunk and stagingInlineMax.
type stagingParams struct {
	slots, slotSize, workers, downWorkers int
	minChunk, inlineMax                   int
}

// maxStagingWorkers bounds StagingWorkers.
const maxStagingWorkers = 64

// stagingParamsFor is the ring's geometry with w copying goroutines, or as many as the host
// needs when w is 0.
func stagingParamsFor(w int) stagingParams {
	up, down := w, w
	if w == 0 {
		procs := runtime.GOMAXPROCS(0)
		up, down = stagingWorkersFor(hostMemmoveRate(), procs), stagingWorkersFor(0, procs)
	}
	return stagingParams{slots: max(up, down) + stagingSpare, slotSize: stagingSlotSize, workers: up, downWorkers: down}
}

// stagingWorkersFor is how many goroutines, each copying rate bytes a second, reach
// stagingTarget on a host with procs Ps; with rate 0, as many as the host allows.
func stagingWorkersFor(rate float64, procs int) int {
	w := stagingMaxWorkers
	if rate > 0 {
		w = int(math.Ceil(stagingTarget / rate))
	}
	return max(stagingMinWorkers, min(w, stagingMaxWorkers, procs-2))
}

// hostMemmoveRate is memmoveRate measured once per process: it is the host's, not a
// stream's, and measuring costs ~10–25 ms and 68 MiB of garbage, once.
var hostMemmoveRate = sync.OnceValue(memmoveRate)

// memmoveProbeSize is how much memmoveRate copies: a source this large is read once, as a
// filler reads a caller's slice, rather than from cache.
const memmoveProbeSize = 64 << 20

// memmoveRate measures one goroutine's memmove rate in bytes a second the way a filler
// copies: a slice it has not read before, a staging slot at a time, into one slot-sized
// buffer. Copying the same buffer over and over would measure the cache, and pick too few
// fillers.
func memmoveRate() float64 {
	src, dst := make([]byte, memmoveProbeSize), make([]byte, stagingSlotSize)
	for i := 0; i < len(src); i += 4096 {
		src[i] = 1
	}
	for i := 0; i < len(dst); i += 4096 {
		dst[i] = 1
	}
	start := time.Now()
	for off := 0; off < len(src); off += len(dst) {
		copy(dst, src[off:off+len(dst)])
	}
	return float64(len(src)) / max(time.Since(start).Seconds(), 1e-9)
}

// CopyToDevice queues a copy of all of src, a plain Go slice, into the start of dst (a
// *device.Buffer or a device.Slice on the stream's device), staged through pinned slots of
// the device's staging pool at close to pinned-memory speed.
//
// It returns only once every chunk of the copy is queued on s, so that whatever is queued on s
// afterwards runs on the GPU after the whole copy; it may block while earlier chunks drain to
// free a staging slot, or while other copies hold every slot of the pool. The future
// completes when the GPU has finished the last chunk, with the first error of any chunk: dst
// holds src then, for work on any stream. The caller may modify or reuse src once the future
// has completed, not before.
//
// src must not be empty and dst must hold at least as many bytes. If ctx ends while the copy
// waits for a staging slot, CopyToDevice stops queueing chunks and returns; the chunks
// already queued still run, so dst then holds a prefix of src, and the future reports ctx's
// error once they have finished.
func CopyToDevice[T cuda.Numeric](ctx context.Context, s *Stream, dst device.Mem, src []T) *Future {
	if s == nil {
		return failed(core.Invalid("CopyToDevice on a nil stream"))
	}
	host, err := sliceBytes("copy source", src)
	if err != nil {
		return failed(err)
	}
	if err := s.checkStaged("copy destination", dst, len(host), "into"); err != nil {
		return failed(err)
	}
	f := s.staged(ctx, true, host, dst)
	runtime.KeepAlive(src)
	return f
}

// CopyFromDevice queues a copy of the start of src (a *device.Buffer or a device.Slice on
// the stream's device) into all of dst, a plain Go slice, staged through pinned slots of the
// device's staging pool at close to pinned-memory speed.
//
// It returns only once every chunk of the copy is queued on s, so that whatever is queued on s
// afterwards runs on the GPU after the whole copy (work queued after it may overwrite src); it
// may block while earlier chunks drain to free a staging slot, or while other copies hold
// every slot of the pool. The future completes once the GPU has finished the last chunk and
// every chunk has been copied from staging into dst, with the first error of any chunk. The
// caller may read or reuse dst once the future has completed, not before: until then the
// copy writes into it.
//
// dst must not be empty and src must hold at least as many bytes. If ctx ends while the copy
// waits for a staging slot, CopyFromDevice stops queueing chunks and returns; the chunks
// already queued still run and land in dst, which then holds a prefix of src (the rest is
// untouched), and the future reports ctx's error once they have.
func CopyFromDevice[T cuda.Numeric](ctx context.Context, s *Stream, dst []T, src device.Mem) *Future {
	if s == nil {
		return failed(core.Invalid("CopyFromDevice on a nil stream"))
	}
	host, err := sliceBytes("copy destination", dst)
	if err != nil {
		return failed(err)
	}
	if err := s.checkStaged("copy source", src, len(host), "from"); err != nil {
		return failed(err)
	}
	return s.staged(ctx, false, host, src)
}

// sliceBytes views a non-empty Go slice as its bytes.
func sliceBytes[T cuda.Numeric](what string, xs []T) ([]byte, error) {
	if xs == nil {
		return nil, core.Invalid("%s is a nil slice", what)
	}
	if len(xs) == 0 {
		return nil, core.Invalid("%s is an empty slice", what)
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(xs))), len(xs)*int(unsafe.Sizeof(zero))), nil
}

// checkStaged checks, before anything is queued, what can be checked off the actor thread:
// the stream is alive, m is device memory of its device and holds n bytes. Each chunk's
// enqueue checks m again on the actor thread (a Close since is reported there).
func (s *Stream) checkStaged(what string, m device.Mem, n int, dir string) error {
	cs := s.core()
	if err := cs.Alive(); err != nil {
		return err
	}
	d, err := core.Owner(what, m)
	if err != nil {
		return err
	}
	if d != cs.Device() {
		return core.WrongDevice(what, d, cs.Device())
	}
	if size := device.Size(m); uint64(n) > size {
		return core.OutOfRange("copy of %d bytes %s a %d-byte %s", n, dir, size, what)
	}
	return nil
}

// stager is a stream's staged-copy state (core.StreamExt): its geometry, and the token that
// keeps its copies whole on the stream. The memory is the device's staging pool's
// (core.Staging), which every stream shares: a copy borrows slots from it while the GPU uses
// them.
type stager struct {
	s     *core.Stream
	pool  *core.Staging
	p     stagingParams
	token chan struct{} // capacity 1: held by the copy that is queueing its chunks

	queued atomic.Uint64 // chunks queued so far (tests watch it)
}

// stager returns the stream's staging state, made on first use with geometry p (nil: sized to
// the host; New passes StagingWorkers').
func (s *Stream) stager(p func() stagingParams) *stager {
	if p == nil {
		p = func() stagingParams { return stagingParamsFor(0) }
	}
	cs := s.core()
	return cs.Ext(func() core.StreamExt { return newStager(cs, p()) }).(*stager)
}

// ring is the stream's staging state, or nil before its first staged copy.
func (s *Stream) ring() *stager {
	st, _ := s.core().LoadedExt().(*stager)
	return st
}

// StagingWorkers reports how many goroutines copy host memory for the stream's staged
// uploads and downloads: StagingWorkers' count, or the ones chosen for the host at the
// stream's first staged copy. Both are 0 before it.
func (s *Stream) StagingWorkers() (upload, download int) {
	if s == nil {
		return 0, 0
	}
	st := s.ring()
	if st == nil {
		return 0, 0
	}
	return st.p.workers, st.p.downWorkers
}

// newStager makes the staging state of geometry p for s (tests install other geometries).
func newStager(s *core.Stream, p stagingParams) *stager {
	p.slotSize = min(p.slotSize, core.StagingSlotSize)
	return &stager{s: s, pool: s.Device().Staging(), p: p, token: make(chan struct{}, 1)}
}

// Release is core.StreamExt's: the stream holds no staging memory of its own (its copies give
// their slots back as they finish), so there is nothing to free.
func (st *stager) Release(backend.Device) error { return nil }

// upSlots is how many slots an upload asks for at most.
func (st *stager) upSlots() int { return min(st.p.slots, st.p.workers+stagingSpare) }

// slotBytes is the first n bytes of slot p.
func slotBytes(p unsafe.Pointer, n int) []byte { return unsafe.Slice((*byte)(p), n) }

// fill copies src into slot p, split across split goroutines.
func (st *stager) fill(p unsafe.Pointer, src []byte, split int) error {
	return st.pool.Use(func() { parallelCopy(slotBytes(p, len(src)), src, split) })
}

// drain copies slot p into dst, split across split goroutines.
func (st *stager) drain(dst []byte, p unsafe.Pointer, split int) error {
	return st.pool.Use(func() { parallelCopy(dst, slotBytes(p, len(dst)), split) })
}

// stagingInlineMax is the largest download of one chunk whose copy out of staging runs on the
// actor thread as the GPU finishes it: up to ten microseconds or so of the actor's time, where
// handing the chunk to a goroutine of its own would cost the copy a goroutine's wake and a
// hand-over on top of the round trip that copies of this size are all about. Larger ones
// would hold the actor longer than they gain (docs/design/staging.md).
const stagingInlineMax = 256 << 10

// stagedChunk is one chunk of a staged copy.
type stagedChunk struct {
	// The chunk's copy on the stream. Host to device, until the chunk is queued (and for
	// good if it never is: skipped), it is the future of the slot's previous chunk of this
	// copy, or nil for the slot's first.
	gpu *Future

	// Host to device only.
	queued  chan struct{} // closed once gpu and skipped are final
	skipped bool          // never queued: the copy stopped first

	// Device to host only.
	st      *stager
	slot    unsafe.Pointer
	split   int
	host    []byte // the chunk's part of dst
	gpuDone bool   // set with gpuErr on the actor thread when the GPU has passed the copy
	gpuErr  error
	once    sync.Once
	outErr  error
}

// copyOut copies the chunk from its slot into dst, once: by a copy-out worker, on the actor
// thread (stagingInlineMax), or by the pool's release when the device closes.
func (c *stagedChunk) copyOut() {
	c.once.Do(func() { c.outErr = c.st.drain(c.host, c.slot, c.split) })
}

// copyOutIfDone is the chunk's pending copy-out at the pool's release, on the actor thread:
// only if the GPU delivered it.
func (c *stagedChunk) copyOutIfDone() {
	if c.gpuDone && c.gpuErr == nil {
		c.copyOut()
	}
}

// stagedJob is one staged copy in progress.
type stagedJob struct {
	st      *stager
	ctx     context.Context
	host    []byte
	mem     device.Mem
	chunk   int              // bytes a chunk (the last may be shorter)
	n       int              // chunks
	slots   []unsafe.Pointer // lent by the pool; chunk k goes through slots[k%len(slots)]
	workers int              // goroutines copying host memory at once: the direction's workers, at most n
	perDir  int              // the direction's workers (p.workers or p.downWorkers)
	result  *actor.Promise[struct{}]

	claim atomic.Int64 // the next chunk a filler (or copy-out worker) takes

	// Host to device.
	chunks []stagedChunk
	m      int // chunks claimed by fillers, a prefix; final before filled closes
	filled chan struct{}

	// Device to host.
	dl        []*stagedChunk  // queued chunks; nil: not (yet)
	ready     []chan struct{} // closed once dl[k] is queued, or will never be
	unqueued  atomic.Int64    // chunks not queued yet
	allQueued chan struct{}   // closed when unqueued reaches 0, or by a halt before
	enqMu     sync.Mutex      // held while queueing a chunk, and by stop
	halted    bool            // under enqMu: queue no more chunks
	live      atomic.Int32    // copy-out workers still running

	mu  sync.Mutex
	err error // the first error
}

func (j *stagedJob) fail(err error) {
	j.mu.Lock()
	if j.err == nil {
		j.err = err
	}
	j.mu.Unlock()
}

func (j *stagedJob) firstErr() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err
}

// stopped reports whether the copy must queue no more chunks: a chunk failed or ctx ended.
func (j *stagedJob) stopped() bool {
	if err := j.ctx.Err(); err != nil {
		j.fail(err)
		return true
	}
	return j.firstErr() != nil
}

// split is how many goroutines share the host copy of a chunk that has at most m-1 chunks
// copied beside it: the first chunks of an upload (the link waits for them) and the last ones
// of a download (the copy's future waits for them) get all the workers; in the middle each
// worker copies whole chunks of its own.
func (j *stagedJob) split(m int) int {
	w := j.perDir
	return max(1, w/min(w, m))
}

// part is chunk k's bytes of the Go slice and their offset.
func (j *stagedJob) part(k int) ([]byte, int) {
	off := k * j.chunk
	return j.host[off:min(off+j.chunk, len(j.host))], off
}

// slot is chunk k's slot.
func (j *stagedJob) slot(k int) unsafe.Pointer { return j.slots[k%len(j.slots)] }

// staged queues a copy between host (a Go slice's bytes) and m, chunk by chunk through slots
// borrowed from the device's staging pool, and returns its future once every chunk is queued.
func (s *Stream) staged(ctx context.Context, h2d bool, host []byte, m device.Mem) *Future {
	if err := ctx.Err(); err != nil {
		return failed(err)
	}
	st := s.stager(nil)
	select {
	case st.token <- struct{}{}:
	case <-ctx.Done():
		return failed(ctx.Err())
	}
	defer func() { <-st.token }()
	chunk := stagingChunk(len(host), st.p.slotSize, cmp.Or(st.p.minChunk, stagingMinChunk))
	n := (len(host) + chunk - 1) / chunk
	perDir, want := st.p.workers, st.upSlots()
	if !h2d {
		perDir, want = st.p.downWorkers, st.p.slots
	}
	var slots []unsafe.Pointer
	var err error
	if len(host) <= core.StagingSmallSize { // one chunk, in a small slot: pins 1/64 of a slot
		p, err := st.pool.AcquireSmall(ctx)
		if err != nil {
			return failed(err)
		}
		chunk, n, slots = len(host), 1, []unsafe.Pointer{p}
	} else if slots, err = st.pool.Acquire(ctx, min(want, n)); err != nil {
		return failed(err)
	}
	j := &stagedJob{st: st, ctx: ctx, host: host, mem: m, chunk: chunk, n: n, slots: slots,
		workers: min(perDir, n), perDir: perDir, result: actor.NewPromise[struct{}]()}
	if h2d {
		return j.upload()
	}
	if n == 1 && len(host) <= cmp.Or(st.p.inlineMax, stagingInlineMax) {
		return j.downloadInline()
	}
	return j.download()
}

// upload runs the fillers: j.workers goroutines (the caller one of them) that take chunks in
// order, each waiting for its slot, copying its part of the slice in and queueing it, so that
// the host copies of several chunks overlap each other and the link. Under token.
func (j *stagedJob) upload() *Future {
	st := j.st
	j.chunks = make([]stagedChunk, j.n)
	for k := range j.chunks {
		j.chunks[k].queued = make(chan struct{})
	}
	j.filled = make(chan struct{})
	if j.n > 1 {
		go j.uploadTail()
	}
	var wg sync.WaitGroup
	for range j.workers - 1 {
		wg.Go(j.fillers)
	}
	j.fillers()
	wg.Wait()
	j.m = min(int(j.claim.Load()), j.n)
	close(j.filled)
	if j.n == 1 { // one chunk: its own future says it all, and it gives its slot back
		if c := &j.chunks[0]; j.m == 1 && !c.skipped {
			return c.gpu
		}
		st.pool.Release(j.slots...)
		return failed(j.firstErr())
	}
	return j.result.Future()
}

// fillers is one filler's loop.
func (j *stagedJob) fillers() {
	for !j.stopped() {
		k := int(j.claim.Add(1) - 1)
		if k >= j.n {
			return
		}
		j.fillChunk(k)
	}
}

// fillChunk waits for chunk k's slot, copies the chunk in and queues its upload.
func (j *stagedJob) fillChunk(k int) {
	st := j.st
	c := &j.chunks[k]
	defer close(c.queued)
	c.skipped = true // until queued
	if s := len(j.slots); k >= s {
		p := &j.chunks[k-s] // the slot's previous chunk, claimed earlier
		<-p.queued
		c.gpu = p.gpu
	}
	if c.gpu != nil {
		if _, err := c.gpu.Await(j.ctx); err != nil {
			if j.ctx.Err() != nil {
				j.fail(j.ctx.Err())
			} else {
				j.fail(err) // an earlier chunk of this copy failed
			}
			return
		}
	}
	if j.stopped() {
		return
	}
	part, off := j.part(k)
	if err := st.fill(j.slot(k), part, j.split(k+1)); err != nil {
		j.fail(err)
		return
	}
	var done func(error)
	if j.n == 1 {
		slots := j.slots
		done = func(error) { st.pool.Release(slots...) }
	}
	c.gpu = st.uploadChunk(j.ctx, j.slot(k), j.mem, off, len(part), done)
	c.skipped = false
	st.queued.Add(1)
	if c.gpu.Ready() && c.gpu.Err() != nil {
		j.fail(c.gpu.Err())
	}
}

// uploadTail waits, in order, for the GPU to finish every chunk queued, then gives the slots
// back and completes the copy's future.
func (j *stagedJob) uploadTail() {
	defer func() {
		<-j.filled // no filler touches a slot any more
		j.st.pool.Release(j.slots...)
		j.result.Complete(struct{}{}, j.firstErr())
	}()
	for k := range j.chunks {
		c := &j.chunks[k]
		select {
		case <-c.queued:
		case <-j.filled:
			if k >= j.m {
				return // never claimed, nor any after it: the copy stopped
			}
			<-c.queued
		}
		if c.skipped {
			continue
		}
		if err := c.gpu.Wait(context.Background()); err != nil { // always completes: the actor sees to it
			j.fail(err)
		}
	}
}

// downloadInline queues a download of one small chunk whose copy out of its slot runs on the
// actor thread as the GPU finishes it: its future completes with the bytes in place, and the
// slot goes back to the pool then. Under token.
func (j *stagedJob) downloadInline() *Future {
	st := j.st
	c := &stagedChunk{st: st, slot: j.slots[0], split: 1, host: j.host}
	st.pool.Pending(c, c.copyOutIfDone)
	f := st.downloadChunk(j.ctx, c, j.mem, 0, func(err error) error {
		if err == nil {
			c.copyOut()
			err = c.outErr
		}
		return err
	}, func(error) {
		st.pool.Done(c)
		st.pool.Release(c.slot)
	})
	st.queued.Add(1)
	return f
}

// download: the caller queues the first chunks, one a slot; then the copy-out workers take
// the chunks in order, each waiting for the GPU to finish its chunk, copying it into the
// slice and at once queueing the chunk that takes the slot next, so that the link gets a new
// chunk the moment a slot frees, with no hand-over between goroutines on the way. The caller
// returns once every chunk is queued, or ctx ended. Under token.
func (j *stagedJob) download() *Future {
	st := j.st
	slots := min(len(j.slots), j.n)
	j.dl = make([]*stagedChunk, j.n)
	j.ready = make([]chan struct{}, j.n)
	for k := range j.ready {
		j.ready[k] = make(chan struct{})
	}
	j.unqueued.Store(int64(j.n))
	j.allQueued = make(chan struct{})
	r := 0
	for ; r < slots && !j.stopped(); r++ {
		if !j.queueDownload(r) {
			break
		}
	}
	st.pool.Release(j.slots[r:]...) // the slots no chunk went into
	if r == 0 {
		j.stop()
		return failed(j.firstErr())
	}
	j.live.Store(int32(j.workers))
	for range j.workers {
		go j.copyOutWorker()
	}
	if r < slots {
		j.stop()
	} else {
		select {
		case <-j.allQueued: // every chunk queued, or the queueing stopped on an error
		case <-j.ctx.Done():
			j.fail(j.ctx.Err())
			j.stop()
		}
	}
	return j.result.Future()
}

// queueDownload queues chunk k into its slot (free by now), unless the copy has stopped.
func (j *stagedJob) queueDownload(k int) bool {
	j.enqMu.Lock()
	defer j.enqMu.Unlock()
	if j.halted {
		return false
	}
	if j.stopped() {
		j.haltLocked()
		return false
	}
	part, off := j.part(k)
	st := j.st
	c := &stagedChunk{st: st, slot: j.slot(k), split: j.split(j.n - k), host: part}
	// Pending before it is queued, so that a release when the device closes, which runs after
	// the enqueue, sees it.
	st.pool.Pending(c, c.copyOutIfDone)
	c.gpu = st.downloadChunk(j.ctx, c, j.mem, off, nil, nil)
	j.dl[k] = c
	st.queued.Add(1)
	close(j.ready[k])
	if j.unqueued.Add(-1) == 0 {
		close(j.allQueued)
	}
	return true
}

// stop ends the queueing: the chunks not queued yet never will be, and no enqueue is under way
// once it returns, so that work the caller queues afterwards runs after the chunks that were.
func (j *stagedJob) stop() {
	j.enqMu.Lock()
	defer j.enqMu.Unlock()
	j.haltLocked()
}

func (j *stagedJob) haltLocked() {
	if j.halted {
		return
	}
	j.halted = true
	for k, c := range j.dl {
		if c == nil {
			close(j.ready[k])
		}
	}
	if j.unqueued.Load() > 0 {
		close(j.allQueued) // wakes the caller: nothing more will be queued
	}
}

// copyOutWorker takes chunks in order: it waits for the GPU to finish one, copies it into the
// slice, and queues the chunk that takes its slot next, or gives the slot back; the last
// worker out completes the copy's future.
func (j *stagedJob) copyOutWorker() {
	st := j.st
	for {
		k := int(j.claim.Add(1) - 1)
		if k >= j.n {
			break
		}
		<-j.ready[k]
		c := j.dl[k] // nil: skipped
		if c == nil {
			continue
		}
		c.gpu.SetAwaitSpin(copyOutSpin)
		_, err := c.gpu.Await(context.Background()) // always completes: the actor sees to it
		if err != nil {
			j.fail(err)
		} else {
			c.copyOut()
			if c.outErr != nil {
				j.fail(c.outErr)
			}
		}
		st.pool.Done(c)
		if next := k + len(j.slots); next >= j.n || !j.queueDownload(next) {
			st.pool.Release(c.slot)
		}
	}
	if j.live.Add(-1) == 0 {
		runtime.KeepAlive(j.host)
		j.result.Complete(struct{}{}, j.firstErr())
	}
}

// uploadChunk queues the copy of slot p's first n bytes to [off, off+n) of dst. The chunk
// gets a watermark of its own: a filler waits for it to reuse the slot. done, if set, runs
// once the chunk's future completes, by whatever route.
func (st *stager) uploadChunk(ctx context.Context, p unsafe.Pointer, dst device.Mem, off, n int, done func(error)) *Future {
	d := st.s.Device()
	return core.QueueTracked(ctx, st.s, func(rt backend.Device, _ *core.Tracker, h backend.Stream) error {
		dp, size, err := d.Resolve("copy destination", core.RangeOf(dst, uint64(off), uint64(n)))
		if err != nil {
			return err
		}
		return rt.CopyHtoD(dp, p, size, h)
	}, core.Tracking{Marked: true, Done: done})
}

// downloadChunk queues the copy of [off, off+len(c.host)) of src into c's slot and records on
// the actor thread when the GPU has done it; then, if set, then turns the result into the
// future's (on the actor thread) and done runs once the future completes.
func (st *stager) downloadChunk(ctx context.Context, c *stagedChunk, src device.Mem, off int, then func(error) error, done func(error)) *Future {
	d := st.s.Device()
	return core.QueueTracked(ctx, st.s, func(rt backend.Device, _ *core.Tracker, h backend.Stream) error {
		p, size, err := d.Resolve("copy source", core.RangeOf(src, uint64(off), uint64(len(c.host))))
		if err != nil {
			return err
		}
		return rt.CopyDtoH(c.slot, p, size, h)
	}, core.Tracking{Marked: true, Done: done, Then: func(err error) error {
		c.gpuDone, c.gpuErr = true, err
		if then != nil {
			return then(err)
		}
		return err
	}})
}

// stagingChunk is the chunk size for a copy of n bytes: about n/stagingSplit, within
// [minChunk, slotSize], evened out over the chunks and rounded up to 4 KiB.
func stagingChunk(n, slotSize, minChunk int) int {
	target := min(max(n/stagingSplit, minChunk), slotSize)
	if n <= target {
		return n
	}
	chunks := (n + target - 1) / target
	c := (n + chunks - 1) / chunks
	return min((c+4095)&^4095, slotSize)
}

// parallelCopy copies src into dst (of the same length), split across up to workers
// goroutines when large.
func parallelCopy(dst, src []byte, workers int) {
	n := len(src)
	parts := 1
	if n >= stagingParallelMin {
		parts = min(workers, runtime.GOMAXPROCS(0), n/stagingPart)
	}
	if parts <= 1 {
		copy(dst, src)
		return
	}
	per := ((n+parts-1)/parts + 63) &^ 63 // whole cache lines
	var wg sync.WaitGroup
	for lo := per; lo < n; lo += per {
		hi := min(lo+per, n)
		wg.Go(func() { copy(dst[lo:hi], src[lo:hi]) })
	}
	copy(dst[:per], src[:per])
	wg.Wait()
}
