package streams

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Copies of Go slices go through a ring of pinned staging buffers per stream. The CUDA runtime
// copies pageable memory at a fraction of the link's speed (10 GB/s against 54 GB/s pinned on
// an H100, PCIe gen5), because it stages through small pinned buffers of its own, one at a
// time. Doing the staging here instead — several chunks in flight, the host side of several
// chunks copied at once by goroutines of their own — overlaps the host copies with each other
// and with the DMA, and keeps the link busy. The figures below were measured on an H200 host
// (16 cores, PCIe gen5): one goroutine memmoves 10–16 GB/s; the DMA keeps ~46 GB/s of its 50
// even beside 145 GB/s of memmove. The H100 hosts vary far more: 8 threads copy 32–71 GB/s
// between them, and staging, by hand in C++ as here, reaches 0.42–0.87× of pinned bandwidth
// accordingly (bench/cbaseline/copyvariants.cu, and the bench's by-hand rows, which run
// bench/cbaseline/stagedring.h beside these copies: gpuactor was 0.90–1.10× of them up and
// 0.94–1.00× down in session 13's runs).
const (
	// stagingSlotSize is a staging buffer's size. The ring has a slot for each of the
	// goroutines copying host memory (each holds one while it copies a chunk, ~300 µs for
	// 4 MiB) and stagingSpare more holding chunks queued for the link (~80 µs each at 50 GB/s),
	// enough that the link never runs dry while the next chunks are copied. Larger slots
	// measured slower on an H200 host, and 8 MiB ones on the H100 hosts.
	//
	// Downloads have more copying goroutines than uploads, so the ring has more slots than
	// an upload needs; a copy cycles through the first of them its direction needs (upSlots
	// for uploads, all for downloads). Each slot an upload fills is read back by the DMA, so
	// fewer slots keep that working set smaller: on an H100 host, with 7 fillers, 15 slots
	// uploaded 43–45 GB/s (medians of 30 copies, three times) where 22 uploaded 41–44, and
	// 36.5 GB/s on average against 32.1; with 8 fillers, and in the bench row on another
	// host, there was no clear difference.
	stagingSlotSize = 4 << 20
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
	// How many goroutines copy host memory depends on the host and on the direction. One
	// memmoves 9–11 GB/s from a slice it has not read before on the H100 and H200 hosts we
	// measured (BenchmarkMemmoveRate). Uploads are best with just enough of them: more
	// memmoves beside the DMA's reads of host memory slow the link (H200 host, 256 MiB: 45–47
	// GB/s with 6 of them, 42–44 with 8, 40–41 with 14; the H100 hosts want 7–8). So a ring
	// measures one goroutine's memmove rate when it is made (memmoveRate) and takes enough
	// goroutines to fill staging at stagingTarget bytes a second — a little more than a PCIe
	// gen5 x16 link carries — within [stagingMinWorkers, stagingMaxWorkers] and leaving two
	// of GOMAXPROCS for the caller and the device's actor. Downloads gain from every core
	// (same host: 38–40 GB/s with 5, 46–49 with 14; C++ threads doing the same peak at 16),
	// since the DMA writes land in cache that the copy-outs read: they get GOMAXPROCS−2,
	// within the same bounds.
	stagingTarget     = 64e9
	stagingMinWorkers = 2
	stagingMaxWorkers = 16
	// copyOutSpin is how long a copy-out worker spins on its chunk's future before parking
	// (Await spins 100 µs by default). A chunk can wait a few DMAs of ~80 µs each behind
	// others. Parked, each chunk paid a wake (~20 µs) and the actor a hand-off (Actor.handOff)
	// before its copy-out and the next chunk's enqueue: on an H100 host, 256 MiB downloads ran
	// at medians of 39.6–42.2 GB/s (41.3 over all) parked against 39.8–45.6 (43.4) spinning,
	// in nine alternating runs of 60 copies each; C++ staging by hand, which spins in
	// cudaEventSynchronize, had run 0–6% ahead of the parked workers. The workers are the
	// copy's own, idle otherwise.
	copyOutSpin = 2 * time.Millisecond
)

// stagingParams is the ring's geometry: measured for the host, or another for tests.
// workers copy host memory into staging for uploads, downWorkers out of it for downloads.
type stagingParams struct {
	slots, slotSize, workers, downWorkers int
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
// buffer. (Copying the same slot-sized buffer over and over, as this probe once did, measures
// the cache: it read 12–15 GB/s on H100 and H200 hosts alike and took 4–6 fillers, which
// uploaded ~0.73× of pinned bandwidth on both; this reads 8.7–10.3 GB/s on the H100 hosts and
// 10.7–12.9 on the H200 host and takes 7–8 and 5–7, which upload 0.78–0.83× on all but the
// noisiest machine measured.)
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
// *device.Buffer or a device.Slice on the stream's device), staged through the stream's
// pinned buffers at close to pinned-memory speed.
//
// It returns only once every chunk of the copy is queued on s, so that whatever is queued on s
// afterwards runs on the GPU after the whole copy; it may block while earlier chunks drain to
// free a staging buffer. The future completes when the GPU has finished the last chunk, with
// the first error of any chunk. The caller may modify or reuse src once the future has
// completed, not before.
//
// src must not be empty and dst must hold at least as many bytes. If ctx ends while the copy
// waits for a staging buffer, CopyToDevice stops queueing chunks and returns; the chunks
// already queued still run, so dst then holds a prefix of src, and the future reports ctx's
// error once they have finished.
func CopyToDevice[T device.Numeric](ctx context.Context, s *Stream, dst device.Mem, src []T) *Future {
	if s == nil {
		return failed(invalid("CopyToDevice on a nil stream"))
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
// the stream's device) into all of dst, a plain Go slice, staged through the stream's pinned
// buffers at close to pinned-memory speed.
//
// It returns only once every chunk of the copy is queued on s, so that whatever is queued on s
// afterwards runs on the GPU after the whole copy (work queued after it may overwrite src); it
// may block while earlier chunks drain to free a staging buffer. The future completes once the
// GPU has finished the last chunk and every chunk has been copied from staging into dst, with
// the first error of any chunk. The caller may read or reuse dst once the future has
// completed, not before: until then the copy writes into it.
//
// dst must not be empty and src must hold at least as many bytes. If ctx ends while the copy
// waits for a staging buffer, CopyFromDevice stops queueing chunks and returns; the chunks
// already queued still run and land in dst, which then holds a prefix of src (the rest is
// untouched), and the future reports ctx's error once they have.
func CopyFromDevice[T device.Numeric](ctx context.Context, s *Stream, dst []T, src device.Mem) *Future {
	if s == nil {
		return failed(invalid("CopyFromDevice on a nil stream"))
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

func failed(err error) *Future { return actor.Completed(struct{}{}, err) }

// sliceBytes views a non-empty Go slice as its bytes.
func sliceBytes[T device.Numeric](what string, xs []T) ([]byte, error) {
	if xs == nil {
		return nil, invalid("%s is a nil slice", what)
	}
	if len(xs) == 0 {
		return nil, invalid("%s is an empty slice", what)
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(xs))), len(xs)*int(unsafe.Sizeof(zero))), nil
}

// checkStaged checks, before anything is queued, what can be checked off the actor thread:
// the stream is alive, m is device memory of its device and holds n bytes. Each chunk's
// enqueue checks m again on the actor thread (a Free since is reported there).
func (s *Stream) checkStaged(what string, m device.Mem, n int, dir string) error {
	if err := s.alive(); err != nil {
		return err
	}
	if m == nil {
		return invalid("%s is nil", what)
	}
	b := device.Range(m, 0, 0).Buffer()
	if b == nil {
		return invalid("%s is a nil buffer", what)
	}
	if b.Device() != s.dev {
		return wrongDevice(what, b.Device(), s.dev)
	}
	if size := device.Size(m); uint64(n) > size {
		return fmt.Errorf("%w: copy of %d bytes %s a %d-byte %s", device.ErrOutOfRange, n, dir, size, what)
	}
	return nil
}

// stager is a stream's staging ring.
type stager struct {
	s     *Stream
	p     stagingParams
	token chan struct{} // capacity 1: held by the copy that is queueing its chunks

	// Under token.
	next   int                     // the slot the next download chunk takes
	nextUp int                     // the slot the next upload chunk takes, below upSlots
	busy   []*Future               // per slot: completes once the slot's last chunk is done with it
	alloc  *actor.Future[struct{}] // the allocation of mem

	// Written on the actor thread by the allocation op only; read by copies once alloc has
	// completed without error, and by release on the actor thread.
	mem []unsafe.Pointer

	// memMu keeps release from freeing mem under a host-side copy: host copies into and out of
	// mem hold it for reading and are skipped once closed; release takes it for writing.
	memMu  sync.RWMutex
	closed bool

	// Device-to-host chunks queued and not yet copied out by a copy-out worker, so that
	// release can finish those the GPU has done before it frees mem.
	pendMu  sync.Mutex
	pending map[*stagedChunk]struct{}

	queued atomic.Uint64 // chunks queued so far (tests watch it)
}

// stager returns the stream's ring, made on first use; its memory comes later, from the
// first copy (allocate).
func (s *Stream) stager() *stager {
	if st := s.staging.Load(); st != nil {
		return st
	}
	if st := newStager(s, stagingParamsFor(s.copiers)); s.staging.CompareAndSwap(nil, st) {
		return st
	}
	return s.staging.Load()
}

// newStager makes a ring of geometry p for s (tests install rings of other geometries).
func newStager(s *Stream, p stagingParams) *stager {
	return &stager{s: s, p: p, token: make(chan struct{}, 1), busy: make([]*Future, p.slots),
		mem: make([]unsafe.Pointer, p.slots), pending: map[*stagedChunk]struct{}{}}
}

// allocate pins the ring's memory on first use (or after an allocation failed); under token.
func (st *stager) allocate(ctx context.Context) error {
	if st.alloc == nil || (st.alloc.Ready() && st.alloc.Err() != nil) {
		st.alloc = device.Exec(ctx, st.s.dev, func(rt backend.Device, _ *device.Tracker) (struct{}, error) {
			// On the actor thread, as release is: a destroyed stream gets no memory.
			if err := st.s.alive(); err != nil {
				return struct{}{}, err
			}
			if st.mem[0] != nil {
				return struct{}{}, nil
			}
			size := uint64(st.p.slotSize)
			for i := range st.mem {
				// Counted in the device's Usage as pinned memory, like MallocHost's: it is.
				if err := st.s.dev.Charge(device.KindPinned, size); err != nil {
					st.freeSlots(rt)
					return struct{}{}, err
				}
				p, err := rt.HostAlloc(size, backend.HostAllocDefault)
				if err != nil {
					st.s.dev.Uncharge(device.KindPinned, size)
					st.freeSlots(rt)
					return struct{}{}, fmt.Errorf("gpuactor/streams: pinning %d staging buffers of %d bytes: %w", st.p.slots, st.p.slotSize, err)
				}
				st.mem[i] = p
			}
			return struct{}{}, nil
		})
	}
	_, err := st.alloc.Await(ctx)
	return err
}

// release finishes the copy-outs of the device-to-host chunks the GPU has done, then frees
// the ring's memory: when the stream is destroyed (Destroy or the device's Close), on the
// actor thread, after the stream has been settled. Host copies that come later are refused
// with ErrDestroyed, as the stream's enqueues are.
func (st *stager) release(rt backend.Device) error {
	if st == nil {
		return nil
	}
	st.pendMu.Lock()
	done := make([]*stagedChunk, 0, len(st.pending))
	for c := range st.pending {
		// gpuDone is written on this thread, by the chunk's completion callback.
		if c.gpuDone && c.gpuErr == nil {
			done = append(done, c)
		}
	}
	st.pendMu.Unlock()
	for _, c := range done {
		c.copyOut() // or waits for the copy-out worker already copying it
	}
	st.memMu.Lock()
	was := st.closed
	st.closed = true
	st.memMu.Unlock()
	if was {
		return nil
	}
	return st.freeSlots(rt)
}

// freeSlots frees the ring's pinned buffers that were made and gives back their charge; on
// the actor thread.
func (st *stager) freeSlots(rt backend.Device) error {
	var errs []error
	for i, p := range st.mem {
		if p != nil {
			errs = append(errs, rt.HostFree(p))
			st.s.dev.Uncharge(device.KindPinned, uint64(st.p.slotSize))
			st.mem[i] = nil
		}
	}
	return errors.Join(errs...)
}

// upSlots is how many of the ring's slots uploads use: the first ones.
func (st *stager) upSlots() int { return min(st.p.slots, st.p.workers+stagingSpare) }

// slot is staging buffer i's memory, the first n bytes of it.
func (st *stager) slot(i, n int) []byte { return unsafe.Slice((*byte)(st.mem[i]), n) }

// fill copies src into slot i, split across split goroutines.
func (st *stager) fill(i int, src []byte, split int) error {
	st.memMu.RLock()
	defer st.memMu.RUnlock()
	if st.closed {
		return fmt.Errorf("%w: stream destroyed during a staged copy", ErrDestroyed)
	}
	parallelCopy(st.slot(i, len(src)), src, split)
	return nil
}

// drain copies slot i into dst, split across split goroutines.
func (st *stager) drain(dst []byte, i, split int) error {
	st.memMu.RLock()
	defer st.memMu.RUnlock()
	if st.closed {
		return fmt.Errorf("%w: stream destroyed during a staged copy", ErrDestroyed)
	}
	parallelCopy(dst, st.slot(i, len(dst)), split)
	return nil
}

// stagedChunk is one chunk of a staged copy.
type stagedChunk struct {
	// The chunk's copy on the stream. Host to device, until the chunk is queued (and for
	// good if it never is: skipped), it is the future of the slot's previous chunk, so that
	// the ring's record of when the slot is free stays right.
	gpu *Future

	// Host to device only.
	queued  chan struct{} // closed once gpu and skipped are final
	skipped bool          // never queued: the copy stopped first

	// Device to host only.
	st      *stager
	slot    int
	split   int
	host    []byte // the chunk's part of dst
	gpuDone bool   // set with gpuErr on the actor thread when the GPU has passed the copy
	gpuErr  error
	once    sync.Once
	outErr  error
}

// copyOut copies the chunk from its slot into dst, once: by a copy-out worker, or by release.
func (c *stagedChunk) copyOut() {
	c.once.Do(func() { c.outErr = c.st.drain(c.host, c.slot, c.split) })
}

// stagedJob is one staged copy in progress.
type stagedJob struct {
	st      *stager
	ctx     context.Context
	host    []byte
	mem     device.Mem
	chunk   int // bytes a chunk (the last may be shorter)
	n       int // chunks
	base    int // the slot of chunk 0
	slots   int // the slots the copy cycles through: the ring's first slots of them
	workers int // goroutines copying host memory at once: the direction's workers, at most n
	perDir  int // the direction's workers (p.workers or p.downWorkers)
	result  *Future

	claim atomic.Int64 // the next chunk a filler (or copy-out worker) takes

	// Host to device.
	chunks []stagedChunk
	prev   []*Future // the ring's busy futures when the copy began
	m      int       // chunks claimed by fillers, a prefix; final before filled closes
	filled chan struct{}

	// Device to host.
	dl        []*stagedChunk  // queued chunks; nil: not (yet)
	ready     []chan struct{} // closed once dl[k] is queued, or will never be
	slotFree  []*Future       // per slot this copy takes: completes when it is done with it
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

// staged queues a copy between host (a Go slice's bytes) and m, chunk by chunk through the
// ring, and returns its future once every chunk is queued.
func (s *Stream) staged(ctx context.Context, h2d bool, host []byte, m device.Mem) *Future {
	if err := ctx.Err(); err != nil {
		return failed(err)
	}
	st := s.stager()
	select {
	case st.token <- struct{}{}:
	case <-ctx.Done():
		return failed(ctx.Err())
	}
	defer func() { <-st.token }()
	if err := st.allocate(ctx); err != nil {
		return failed(err)
	}
	chunk := stagingChunk(len(host), st.p.slotSize)
	n := (len(host) + chunk - 1) / chunk
	perDir := st.p.workers
	if !h2d {
		perDir = st.p.downWorkers
	}
	base, slots := st.next, st.p.slots
	if h2d {
		base, slots = st.nextUp, st.upSlots()
	}
	j := &stagedJob{st: st, ctx: ctx, host: host, mem: m, chunk: chunk, n: n, base: base, slots: slots,
		workers: min(perDir, n), perDir: perDir, result: actor.NewFuture[struct{}]()}
	if h2d {
		return j.upload()
	}
	return j.download()
}

// upload runs the fillers: j.workers goroutines (the caller one of them) that take chunks in
// order, each waiting for its slot, copying its part of the slice in and queueing it, so that
// the host copies of several chunks overlap each other and the link. Under token.
func (j *stagedJob) upload() *Future {
	st := j.st
	j.prev = slices.Clone(st.busy)
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
	for k := range j.m {
		st.busy[(j.base+k)%j.slots] = j.chunks[k].gpu
	}
	st.nextUp = (j.base + j.m) % j.slots
	close(j.filled)
	if j.n == 1 { // one chunk: its own future says it all
		if c := &j.chunks[0]; j.m == 1 && !c.skipped {
			return c.gpu
		}
		return failed(j.firstErr())
	}
	return j.result
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
	slot := (j.base + k) % j.slots
	c.skipped = true // until queued
	if k >= j.slots {
		p := &j.chunks[k-j.slots] // the slot's previous chunk, claimed earlier
		<-p.queued
		c.gpu = p.gpu
	} else {
		c.gpu = j.prev[slot]
	}
	if c.gpu != nil {
		if _, err := c.gpu.Await(j.ctx); err != nil {
			if j.ctx.Err() != nil {
				j.fail(j.ctx.Err())
				return
			}
			if k >= j.slots {
				j.fail(err) // an earlier chunk of this copy failed (errors of earlier copies are theirs)
				return
			}
		}
	}
	if j.stopped() {
		return
	}
	part, off := j.part(k)
	if err := st.fill(slot, part, j.split(k+1)); err != nil {
		j.fail(err)
		return
	}
	c.gpu = st.s.uploadChunk(j.ctx, st, slot, j.mem, off, len(part))
	c.skipped = false
	st.queued.Add(1)
	if c.gpu.Ready() && c.gpu.Err() != nil {
		j.fail(c.gpu.Err())
	}
}

// uploadTail waits, in order, for the GPU to finish every chunk queued, then completes the
// copy's future.
func (j *stagedJob) uploadTail() {
	for k := range j.chunks {
		c := &j.chunks[k]
		select {
		case <-c.queued:
		case <-j.filled:
			if k >= j.m {
				j.result.Complete(struct{}{}, j.firstErr())
				return
			}
			<-c.queued
		}
		if c.skipped {
			continue
		}
		if _, err := c.gpu.Await(context.Background()); err != nil { // always completes: the actor sees to it
			j.fail(err)
		}
	}
	j.result.Complete(struct{}{}, j.firstErr())
}

// download: the caller queues the first chunks, one a slot, each once the copy before is done
// with its slot; then the copy-out workers take the chunks in order, each waiting for the GPU
// to finish its chunk, copying it into the slice and at once queueing the chunk that takes the
// slot next, so that the link gets a new chunk the moment a slot frees, with no hand-over
// between goroutines on the way. The caller returns once every chunk is queued, or ctx ended.
// Under token.
func (j *stagedJob) download() *Future {
	st := j.st
	slots := min(j.slots, j.n)
	j.dl = make([]*stagedChunk, j.n)
	j.ready = make([]chan struct{}, j.n)
	for k := range j.ready {
		j.ready[k] = make(chan struct{})
	}
	j.unqueued.Store(int64(j.n))
	j.allQueued = make(chan struct{})
	j.slotFree = make([]*Future, slots)
	r := 0
	for ; r < slots && !j.stopped(); r++ {
		if b := st.busy[(j.base+r)%j.slots]; b != nil {
			// Its previous chunk's error, if any, belongs to that chunk's copy.
			if _, err := b.Await(j.ctx); err != nil && j.ctx.Err() != nil {
				j.fail(j.ctx.Err())
				break
			}
		}
		j.slotFree[r] = actor.NewFuture[struct{}]()
		if !j.queueDownload(r) {
			break
		}
	}
	for i := range r { // the slots this copy took; the others keep their previous chunk's future
		st.busy[(j.base+i)%j.slots] = j.slotFree[i]
	}
	st.next = (j.base + r) % j.slots
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
	return j.result
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
	j.dl[k] = st.s.downloadChunk(j.ctx, st, (j.base+k)%j.slots, j.split(j.n-k), j.mem, off, part)
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
// slice, queues the chunk that takes its slot next, or frees
// the slot; the last worker out completes the copy's future.
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
		st.pendMu.Lock()
		delete(st.pending, c)
		st.pendMu.Unlock()
		if next := k + j.slots; next >= j.n || !j.queueDownload(next) {
			j.slotFree[k%j.slots].Complete(struct{}{}, nil)
		}
	}
	if j.live.Add(-1) == 0 {
		runtime.KeepAlive(j.host)
		j.result.Complete(struct{}{}, j.firstErr())
	}
}

// uploadChunk queues the copy of slot i's first n bytes to [off, off+n) of dst.
// The chunk gets a watermark of its own: a filler waits for it to reuse the slot.
func (s *Stream) uploadChunk(ctx context.Context, st *stager, i int, dst device.Mem, off, n int) *Future {
	return s.tracked(ctx, tracking{marked: true}, func(rt backend.Device, _ *device.Tracker, _ backend.Stream) error {
		p, size, err := s.dev.Resolve("copy destination", device.Range(dst, uint64(off), uint64(n)))
		if err != nil {
			return err
		}
		return rt.CopyHtoD(p, st.mem[i], size, s.h)
	})
}

// downloadChunk queues the copy of [off, off+len(part)) of src into slot i; once the GPU has
// done it, the chunk is copied on into part (copyOut).
func (s *Stream) downloadChunk(ctx context.Context, st *stager, i, split int, src device.Mem, off int, part []byte) *stagedChunk {
	c := &stagedChunk{st: st, slot: i, split: split, host: part}
	// Pending before it is queued, so that a release (Destroy) that runs after the enqueue
	// sees it.
	st.pendMu.Lock()
	st.pending[c] = struct{}{}
	st.pendMu.Unlock()
	c.gpu = device.ExecTracked(ctx, s.dev, func(rt backend.Device, tr *device.Tracker, done func(error)) error {
		if err := s.alive(); err != nil {
			return err
		}
		p, size, err := s.dev.Resolve("copy source", device.Range(src, uint64(off), uint64(len(part))))
		if err != nil {
			return err
		}
		if err := rt.CopyDtoH(st.mem[i], p, size, s.h); err != nil {
			return err
		}
		tr.AfterMarked(s.h, func(err error) {
			c.gpuDone, c.gpuErr = true, err
			done(err)
		})
		return nil
	})
	return c
}

// stagingChunk is the chunk size for a copy of n bytes: about n/stagingSplit, within
// [stagingMinChunk, slotSize], evened out over the chunks and rounded up to 4 KiB.
func stagingChunk(n, slotSize int) int {
	target := min(max(n/stagingSplit, stagingMinChunk), slotSize)
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
