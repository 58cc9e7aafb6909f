package device

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/sim"
)

// trackerOn returns a tracker over a simulated device with the given kind of watermarks, and
// a stream of that device.
func trackerOn(t *testing.T, kind string) (*Tracker, backend.Device, backend.Stream) {
	t.Helper()
	dev, err := sim.New().Open(0)
	require.NoError(t, err)
	s, err := dev.StreamCreate(backend.StreamNonBlocking, 0)
	require.NoError(t, err)
	var faults []error
	tr := newTracker(dev, func(err error) { faults = append(faults, err) }, s)
	require.IsType(t, &memMarks{}, tr.marks, "the simulator supports memory watermarks")
	if kind == "event" {
		require.NoError(t, tr.marks.close())
		tr.marks = &eventMarks{dev: dev}
	}
	t.Cleanup(func() { _ = tr.close() }) // a test that faulted the device gets its error here
	return tr, dev, s
}

// pollUntil polls tr until cond holds, or fails after a while.
func pollUntil(t *testing.T, tr *Tracker, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		require.True(t, time.Now().Before(deadline), "condition not reached")
		tr.poll()
	}
}

func TestTrackerCompletesInOrderOnlyAfterTheGPU(t *testing.T) {
	for _, kind := range []string{"memory", "event"} {
		t.Run(kind, func(t *testing.T) {
			tr, dev, s := trackerOn(t, kind)
			gate := make(chan struct{})
			require.NoError(t, dev.LaunchHostFunc(s, func() { <-gate }))
			var order []int
			for i := range 100 {
				tr.After(s, func(err error) {
					assert.NoError(t, err)
					order = append(order, i)
				})
				if i%10 == 0 {
					tr.poll() // watermarks recorded while the stream is held
				}
			}
			for range 50 {
				tr.poll()
			}
			assert.Empty(t, order, "nothing completes while the stream is held")
			close(gate)
			pollUntil(t, tr, func() bool { return len(order) == 100 })
			for i, v := range order {
				require.Equal(t, i, v, "callbacks run in registration order")
			}
			assert.False(t, tr.poll(), "nothing pending")
			assert.Empty(t, tr.streams, "an idle stream is forgotten")
			assert.NoError(t, tr.close())
		})
	}
}

func TestTrackerMemoryWatermarksWrap(t *testing.T) {
	tr, _, s := trackerOn(t, "memory")
	done := 0
	tr.After(s, func(error) { done++ })
	// A slot whose count is about to wrap: its word in pinned memory, at the value just before.
	m := tr.marks.(*memMarks)
	slot := m.free[0]
	m.free = m.free[1:]
	*slot.word, slot.next = ^uint32(0)-2, ^uint32(0)-1
	tr.streams[s].slot = slot
	pollUntil(t, tr, func() bool { return done == 1 })
	for i := range 5 {
		tr.After(s, func(error) { done++ })
		pollUntil(t, tr, func() bool { return done == 2+i })
	}
	assert.Less(t, slot.next, uint32(10), "the count wrapped")
	// A watermark not yet written compares as not reached across the wrap.
	ok, err := m.reached(&track{slot: &markSlot{word: new(uint32)}}, mark{seq: 1})
	require.NoError(t, err)
	assert.False(t, ok)
	w := ^uint32(0)
	ok, _ = m.reached(&track{slot: &markSlot{word: &w}}, mark{seq: 2})
	assert.False(t, ok, "0xffffffff is before 2 after the wrap")
}

func TestTrackerMemoryWatermarksReportFaults(t *testing.T) {
	tr, dev, s := trackerOn(t, "memory")
	mod, err := dev.LoadModule(backend.ModuleSpec{SimKernels: map[string]backend.SimKernel{
		"crash": func(*backend.KernelCall) error { return errors.New("boom") },
	}})
	require.NoError(t, err)
	k, err := dev.ModuleKernel(mod, "crash")
	require.NoError(t, err)
	gate := make(chan struct{})
	require.NoError(t, dev.LaunchHostFunc(s, func() { <-gate }))
	require.NoError(t, dev.Launch(k, backend.Dim3{X: 1, Y: 1, Z: 1}, backend.Dim3{X: 1, Y: 1, Z: 1}, 0, s, nil))
	var got error
	finished := false
	tr.After(s, func(err error) { got, finished = err, true })
	tr.poll() // the watermark is queued behind the kernel that will fault
	close(gate)
	// The faulted device never writes the watermark: the stalled stream is asked for its error.
	pollUntil(t, tr, func() bool { return finished })
	require.Error(t, got)
	assert.True(t, errors.Is(got, cudaerr.LaunchFailure) || errors.Is(got, cudaerr.IllegalAddress), "got %v", got)
}

func TestTrackerPacesWatermarksUnderLoad(t *testing.T) {
	tr, dev, s := trackerOn(t, "memory")
	gate := make(chan struct{})
	require.NoError(t, dev.LaunchHostFunc(s, func() { <-gate }))
	defer close(gate)
	for range 1000 {
		tr.After(s, func(error) {})
		tr.poll()
	}
	// Polled after every operation, within far less than 1000 × markGap: the first
	// watermark at once, later ones spaced by markGap.
	assert.Less(t, len(tr.streams[s].marks), 100, "watermarks are shared while the stream is busy")
	tr.AfterMarked(s, func(error) {})
	n := len(tr.streams[s].marks)
	tr.poll()
	assert.Equal(t, n+1, len(tr.streams[s].marks), "AfterMarked gets a watermark at once")
}
