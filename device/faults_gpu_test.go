//go:build linux

package device_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/cudart"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/internal/testgpu"
	"github.com/gpuactor/gpuactor/streams"
)

// The fault probe: TestFaultKinds re-executes this test binary once per fault kind, running
// TestFaultChild there with faultKindEnv naming the kind (the pattern of Go's os/exec tests).
// A real kernel fault poisons the CUDA context for the rest of the process that made it, so
// each one needs a process of its own; the parent stays healthy and is the "other process on
// the same GPU". docs/faults.md holds what an H100 answered.
//
// The child speaks on stdout in lines the parent looks for among whatever else is printed:
// faultStageLine once the fault has been seen (the child then waits for a line on stdin, so
// that the parent checks the GPU while the faulted process still holds its context), and
// faultReportLine with the JSON of a faultReport: before the risky cudaDeviceReset step
// (Final false, so a crash there still leaves a report) and at the end (Final true). After
// that the child waits for stdin to close and exits.
const (
	faultKindEnv    = "GPUACTOR_FAULT_KIND"
	faultStageLine  = "FAULTSTAGE faulted"
	faultReportLine = "FAULTREPORT "
)

// faultSource holds the good kernel (add_u32) and one kernel per fault kind.
const faultSource = testdev.AddU32 + `
// Stores 4·off bytes past p: with off = 2^38 a TiB past the allocation, where nothing is mapped.
extern "C" __global__ void oob_store(unsigned int* p, long long off) { p[off] = 1; }

extern "C" __global__ void trap_now() { __trap(); }

// NVRTC has no <assert.h> ("could not open source file"), but its built-in header defines
// assert as glibc's does, calling the driver's __assertfail (a no-op under -DNDEBUG).
extern "C" __global__ void assert_false(int x) { assert(x == 42); }

// An 8-byte load from p + off: with an aligned p and off = 1, misaligned.
extern "C" __global__ void misaligned_load(const unsigned char* p, int off, unsigned long long* out) {
    *out = *(const unsigned long long*)(p + off);
}

// Spins until *flag is non-zero; nothing ever sets it. The volatile load keeps the loop from
// being optimised away as side-effect free.
extern "C" __global__ void spin_forever(volatile unsigned int* flag) {
    while (*flag == 0) {}
}
`

// faultKind is one way to make a kernel fail.
type faultKind struct {
	name   string
	how    string // for the log's table
	kernel string
	args   func(buf *device.Buffer) []any
	// want is the launch's code as measured on an H100; 0 for a kernel that never ends.
	want cudaerr.Code
	// resetFirst: the child calls cudaDeviceReset as soon as the fault is seen, before anything
	// else can leave a thread stuck in the runtime, and then only tries to work again.
	resetFirst bool
}

var faultKinds = []faultKind{
	{"oob", "store 1 TiB past a 64 KiB allocation", "oob_store",
		func(b *device.Buffer) []any { return []any{b, int64(1) << 38} }, cudaerr.IllegalAddress, false},
	{"trap", "__trap()", "trap_now", func(*device.Buffer) []any { return nil }, cudaerr.LaunchFailure, false},
	{"assert", "assert(x == 42) with x = 0 (NVRTC's built-in assert)", "assert_false",
		func(*device.Buffer) []any { return []any{int32(0)} }, cudaerr.Assert, false},
	{"misaligned", "8-byte load from an allocation's start + 1", "misaligned_load",
		func(b *device.Buffer) []any { return []any{b, int32(1), b.Slice(256, 8)} }, cudaerr.MisalignedAddress, false},
	{"hang", "spin on a flag nothing sets", "spin_forever",
		func(b *device.Buffer) []any { return []any{b} }, 0, false},
	{"hang-reset", "the same spin, then cudaDeviceReset at once", "spin_forever",
		func(b *device.Buffer) []any { return []any{b} }, 0, true},
}

// outcome is what one call (or a short sequence of calls) after the fault gave.
type outcome struct {
	OK     bool   `json:"ok,omitempty"`     // no error (and, for a round trip, the right data)
	Hung   bool   `json:"hung,omitempty"`   // no answer within its bound
	Err    string `json:"err,omitempty"`    // the error's text
	Code   int32  `json:"code,omitempty"`   // the cudaerr code the error carries, 0 for none
	Failed bool   `json:"failed,omitempty"` // the error matches device.ErrDeviceFailed
}

func outcomeOf(err error) outcome {
	if err == nil {
		return outcome{OK: true}
	}
	o := outcome{Err: err.Error(), Failed: errors.Is(err, device.ErrDeviceFailed)}
	if errors.Is(err, context.DeadlineExceeded) {
		o.Hung = true
	}
	var ce *cudaerr.Error
	if errors.As(err, &ce) {
		o.Code = int32(ce.Code)
	} else if c, ok := cudaerr.CodeOf(err); ok {
		o.Code = int32(c)
	}
	return o
}

// String is the outcome as a table cell.
func (o outcome) String() string {
	switch {
	case o.OK:
		return "works"
	case o.Hung:
		return "no answer (timed out)"
	case o.Code != 0:
		s := fmt.Sprintf("%d %s", o.Code, cudaerr.Code(o.Code).Name())
		if o.Failed {
			s += " (ErrDeviceFailed)"
		}
		return s
	case o.Err != "":
		return "fails: " + o.Err
	}
	return "not run"
}

// bounded runs fn with a context that ends after d, and gives up on it a second later: a call
// stuck in the runtime (a device Close behind a kernel that never ends) ignores its context.
func bounded(d time.Duration, fn func(ctx context.Context) error) outcome {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- fn(ctx) }()
	select {
	case err := <-done:
		return outcomeOf(err)
	case <-time.After(d + time.Second):
		return outcome{Hung: true, Err: fmt.Sprintf("no return within %v", d+time.Second)}
	}
}

// faultReport is the child's record of one fault.
type faultReport struct {
	Kind    string `json:"kind"`
	GPU     string `json:"gpu"`
	Driver  int    `json:"driver"`
	Runtime int    `json:"runtime"`
	Final   bool   `json:"final"`

	Launch    outcome `json:"launch"`     // the faulting launch's future
	DevErr    string  `json:"dev_err"`    // dev.Err() after it
	DevFailed bool    `json:"dev_failed"` // dev.Err() matches device.ErrDeviceFailed
	Malloc    outcome `json:"malloc"`     // dev.MallocBytes(16) after it
	Relaunch  outcome `json:"relaunch"`   // a good kernel and copies on the device's own stream
	NewStream outcome `json:"new_stream"` // a new stream of the device, and a good round trip on it

	TwinErr    string  `json:"twin_err"`    // Err of a second Device on GPU 0, opened before the fault, before any call after it
	TwinMalloc outcome `json:"twin_malloc"` // Malloc(16) on that second Device

	Others     []outcome `json:"others"`      // a good round trip on each other GPU (1, 2, …), opened before the fault
	OthersSkip string    `json:"others_skip"` // why Others were not run

	RawMalloc     outcome `json:"raw_malloc"`      // cudaMalloc(16) straight into the runtime
	RawLastError  outcome `json:"raw_last_err"`    // cudaGetLastError straight into the runtime
	RawSync       outcome `json:"raw_sync"`        // cudaDeviceSynchronize straight into the runtime
	Reopen        outcome `json:"reopen"`          // device.Open(0) again in the faulted process
	ReopenErr     string  `json:"reopen_err"`      // the re-opened Device's Err before any call
	ReopenMalloc  outcome `json:"reopen_malloc"`   // Malloc(16) on the re-opened device
	ReopenLaunch  outcome `json:"reopen_launch"`   // compile, load and a good round trip there
	Close         outcome `json:"close"`           // Close of the faulted device
	Reset         outcome `json:"reset"`           // cudaDeviceReset, called through purego
	AfterResetRaw outcome `json:"after_reset_raw"` // cudaMalloc(16) straight into the runtime after it
	AfterReset    outcome `json:"after_reset"`     // Open, Malloc, compile and a round trip after it
}

// goodRound proves a stream works: a copy in, add_u32, a copy out, and the result checked. It
// leaves its 1 KiB buffer to the device's Close: freeing it waits for every stream of the
// device, so behind a kernel that never ends it would hang the caller.
func goodRound(ctx context.Context, s *streams.Stream, dev *device.Device, k *device.Kernel) error {
	const n = 256
	buf, err := dev.MallocBytes(ctx, 4*n)
	if err != nil {
		return err
	}
	in := make([]uint32, n)
	for i := range in {
		in[i] = uint32(i)
	}
	if err := streams.CopyToDevice(ctx, s, buf, in).Wait(ctx); err != nil {
		return err
	}
	if err := s.Launch(ctx, k, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(n)}, buf, uint32(7), int32(n)).Wait(ctx); err != nil {
		return err
	}
	out := make([]uint32, n)
	if err := streams.CopyFromDevice(ctx, s, out, buf).Wait(ctx); err != nil {
		return err
	}
	for i, v := range out {
		if v != uint32(i)+7 {
			return fmt.Errorf("word %d is %d, want %d", i, v, i+7)
		}
	}
	return nil
}

// compileGood compiles faultSource on dev and returns its add_u32.
func compileGood(ctx context.Context, dev *device.Device) (*device.Module, *device.Kernel, error) {
	mod, err := dev.Compile(ctx, device.Source{Name: "faults.cu", Code: faultSource})
	if err != nil {
		return nil, nil, err
	}
	k, err := mod.Kernel(ctx, "add_u32")
	return mod, k, err
}

// openRound opens device ordinal and runs a good round trip on it, returning the device.
func openRound(ctx context.Context, ordinal int, opts []device.Option) (*device.Device, error) {
	dev, err := device.Open(ctx, ordinal, opts...)
	if err != nil {
		return nil, err
	}
	_, k, err := compileGood(ctx, dev)
	if err != nil {
		return dev, err
	}
	return dev, goodRound(ctx, streams.Default(dev), dev, k)
}

// cudaDeviceReset calls the runtime's cudaDeviceReset for ordinal on a locked thread. The
// library has no reset call (resetting the primary context under live actors would pull it
// out from under them), so the probe reaches the same libcudart through purego: no cgo.
func cudaDeviceReset(ordinal int) error {
	rt, err := cudart.Load()
	if err != nil {
		return err
	}
	lib, err := purego.Dlopen(rt.Path(), purego.RTLD_NOW|purego.RTLD_GLOBAL) // the copy already loaded
	if err != nil {
		return err
	}
	setDevice, err := purego.Dlsym(lib, "cudaSetDevice")
	if err != nil {
		return err
	}
	reset, err := purego.Dlsym(lib, "cudaDeviceReset")
	if err != nil {
		return err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if r, _, _ := purego.SyscallN(setDevice, uintptr(ordinal)); int32(r) != 0 {
		return cudaerr.New("cudaSetDevice", cudaerr.Code(int32(r)))
	}
	r, _, _ := purego.SyscallN(reset)
	return cudaerr.New("cudaDeviceReset", cudaerr.Code(int32(r)))
}

// rawCall runs fn on a locked thread with device ordinal current: the runtime's own answers,
// which the library's record of a failure would otherwise stand in front of.
func rawCall(ordinal int, fn func(rt *cudart.Runtime) error) error {
	rt, err := cudart.Load()
	if err != nil {
		return err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := rt.SetDevice(ordinal); err != nil {
		return err
	}
	return fn(rt)
}

// rawMalloc allocates 16 bytes and leaves them: cudaFree waits for the whole device, so behind
// a kernel that never ends it would hang.
func rawMalloc(rt *cudart.Runtime) error {
	_, err := rt.Malloc(16)
	return err
}

// TestFaultChild is the child side of TestFaultKinds: it provokes the fault named by
// faultKindEnv and reports what every later call gave. Without the variable it skips.
func TestFaultChild(t *testing.T) {
	name := os.Getenv(faultKindEnv)
	if name == "" {
		t.Skip("runs only as TestFaultKinds' child process")
	}
	var kind faultKind
	for _, k := range faultKinds {
		if k.name == name {
			kind = k
		}
	}
	require.NotEmpty(t, kind.name, "unknown fault kind %q", name)
	emit := func(r *faultReport) {
		b, err := json.Marshal(r)
		require.NoError(t, err)
		fmt.Printf("%s%s\n", faultReportLine, b)
	}
	stdin := bufio.NewReader(os.Stdin)

	// No cleanup closes these devices: after a fault Close may never return, and the process's
	// exit is what frees the GPU.
	ctx := context.Background()
	opts := []device.Option{device.WithBackend(device.BackendCUDA), device.WithKernelCache("")}
	dev, err := device.Open(ctx, 0, opts...)
	require.NoError(t, err)
	p := dev.Properties()
	r := &faultReport{Kind: kind.name, GPU: p.Name, Driver: p.DriverVersion, Runtime: p.RuntimeVersion}
	mod, good, err := compileGood(ctx, dev)
	require.NoError(t, err)
	bad, err := mod.Kernel(ctx, kind.kernel)
	require.NoError(t, err)
	buf, err := dev.MallocBytes(ctx, 64<<10)
	require.NoError(t, err)
	s := streams.Default(dev)
	require.NoError(t, s.Memset(ctx, buf, 0).Wait(ctx))                  // the spinner's flag stays 0
	require.NoError(t, goodRound(ctx, s, dev, good), "before the fault") // the device works

	// A second Device on the same GPU, opened separately before the fault: whether the library
	// tells it of the failure before it calls the runtime itself.
	twin, err := device.Open(ctx, 0, opts...)
	require.NoError(t, err)

	// Every other GPU, opened (and used) before the fault, to see whether the fault reaches
	// it: each, since a host's GPUs may differ in how they are linked to GPU 0.
	var others []*device.Device
	var goods []*device.Kernel
	if n, err := device.Count(ctx, opts...); err != nil || n < 2 {
		r.OthersSkip = fmt.Sprintf("the machine has %d GPU(s)", n)
	} else {
		others, goods = openOthers(t, ctx, n, opts)
	}

	// The fault. A kernel that never ends is given 3 s: nothing can return for it.
	wait := 20 * time.Second
	if kind.want == 0 {
		wait = 3 * time.Second
	}
	r.Launch = bounded(wait, func(ctx context.Context) error {
		return s.Launch(ctx, bad, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(1)}, kind.args(buf)...).Wait(ctx)
	})
	if err := dev.Err(); err != nil {
		r.DevErr, r.DevFailed = err.Error(), errors.Is(err, device.ErrDeviceFailed)
	}
	fmt.Println(faultStageLine)
	_, _ = stdin.ReadString('\n') // the parent checks its own GPU work meanwhile

	const bound = 3 * time.Second
	reset := func() {
		r.Reset = bounded(bound, func(context.Context) error { return cudaDeviceReset(0) })
		if r.Reset.Hung {
			return
		}
		r.AfterResetRaw = bounded(bound, func(context.Context) error { return rawCall(0, rawMalloc) })
		r.AfterReset = bounded(10*time.Second, func(ctx context.Context) error {
			d, err := openRound(ctx, 0, opts)
			if d != nil {
				_ = d.Close()
			}
			return err
		})
	}
	if kind.resetFirst {
		reset()
		r.Final = true
		emit(r)
		_, _ = io.Copy(io.Discard, stdin)
		return
	}

	if err := twin.Err(); err != nil {
		r.TwinErr = err.Error()
	}
	r.TwinMalloc = bounded(bound, func(ctx context.Context) error {
		_, err := twin.MallocBytes(ctx, 16)
		return err
	})
	r.Malloc = bounded(bound, func(ctx context.Context) error {
		_, err := dev.MallocBytes(ctx, 16)
		return err
	})
	r.Relaunch = bounded(bound, func(ctx context.Context) error { return goodRound(ctx, s, dev, good) })
	r.NewStream = bounded(bound, func(ctx context.Context) error {
		ns, err := streams.New(ctx, dev)
		if err != nil {
			return err
		}
		return goodRound(ctx, ns, dev, good)
	})
	r.Others = boundedEach(bound, others, goods)

	// What the runtime itself answers, past the library's bookkeeping of the failure.
	r.RawMalloc = bounded(bound, func(context.Context) error { return rawCall(0, rawMalloc) })
	r.RawLastError = bounded(bound, func(context.Context) error {
		return rawCall(0, func(rt *cudart.Runtime) error { return rt.GetLastError() })
	})

	// In-process recovery without a reset: a new Device on the same ordinal, on the process's
	// (primary) context.
	var again *device.Device
	r.Reopen = bounded(bound, func(ctx context.Context) error {
		var err error
		again, err = device.Open(ctx, 0, opts...)
		return err
	})
	if again != nil {
		if err := again.Err(); err != nil {
			r.ReopenErr = err.Error()
		}
		r.ReopenMalloc = bounded(bound, func(ctx context.Context) error {
			_, err := again.MallocBytes(ctx, 16)
			return err
		})
		r.ReopenLaunch = bounded(bound, func(ctx context.Context) error {
			_, k, err := compileGood(ctx, again)
			if err != nil {
				return err
			}
			return goodRound(ctx, streams.Default(again), again, k)
		})
	}
	// Last, as behind a kernel that never ends these wait for good, each holding a thread.
	r.RawSync = bounded(bound, func(context.Context) error {
		return rawCall(0, func(rt *cudart.Runtime) error { return rt.DeviceSynchronize() })
	})
	r.Close = bounded(bound, func(context.Context) error { return dev.Close() })
	emit(r) // the reset below tears the context down under live handles: report first
	reset()
	r.Final = true
	emit(r)
	_, _ = io.Copy(io.Discard, stdin) // until the parent closes stdin
}

// otherProcess is the parent's device: a healthy process on the same GPU.
type otherProcess struct {
	dev  *device.Device
	good *device.Kernel
}

func (o otherProcess) check() outcome {
	return bounded(10*time.Second, func(ctx context.Context) error { return goodRound(ctx, streams.Default(o.dev), o.dev, o.good) })
}

// childRun is what the parent saw of one child.
type childRun struct {
	report         faultReport
	during, after  outcome // the parent's own round trip while the child lived on faulted, and after it ended
	exited         bool    // the child exited by itself once stdin closed
	exitTook       time.Duration
	stderr, stdout string
}

// runFaultChild runs the child for kind, checking other on the GPU while the child holds its
// faulted context and after the child is gone.
func runFaultChild(t *testing.T, kind faultKind, other otherProcess) childRun {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFaultChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), faultKindEnv+"="+kind.name)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)

	lines := make(chan string, 64)
	var all strings.Builder
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var run childRun
	// next waits for a line starting with prefix; false at the end of output or after d.
	next := func(prefix string, d time.Duration) (string, bool) {
		timeout := time.After(d)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					return "", false
				}
				all.WriteString(l + "\n")
				if strings.HasPrefix(l, prefix) {
					return l, true
				}
			case <-timeout:
				return "", false
			}
		}
	}
	kill := func() {
		_ = cmd.Process.Kill()
	}
	defer func() {
		run.stdout, run.stderr = all.String(), stderr.String()
	}()

	_, ok := next(faultStageLine, 90*time.Second)
	if !ok {
		kill()
		for range lines {
		}
		_ = cmd.Wait()
		t.Errorf("%s: the child never reported its fault\nstdout:\n%s\nstderr:\n%s", kind.name, all.String(), stderr.String())
		return run
	}
	run.during = other.check()
	_, _ = io.WriteString(stdin, "go\n")
	for {
		l, ok := next(faultReportLine, 90*time.Second)
		if !ok {
			break
		}
		var r faultReport
		if err := json.Unmarshal([]byte(strings.TrimPrefix(l, faultReportLine)), &r); err != nil {
			t.Errorf("%s: bad report %q: %v", kind.name, l, err)
			break
		}
		run.report = r
		if r.Final {
			break
		}
	}
	_ = stdin.Close()
	start := time.Now()
	go func() {
		for range lines { // drain, so the child never blocks on a full pipe
		}
		exited <- cmd.Wait()
	}()
	select {
	case <-exited:
		run.exited = true
	case <-time.After(15 * time.Second):
		kill()
		<-exited
	}
	run.exitTook = time.Since(start)
	run.after = other.check()
	return run
}

// TestFaultKinds provokes each kind of kernel fault in a child process on GPU 0 and checks what
// the CUDA runtime allows afterwards, in the faulted process and in another one (this test's
// own) on the same GPU. What it asserts is what an H100 did (docs/faults.md): the four
// faults are sticky, each with its own code, fail the library's Device with ErrDeviceFailed,
// and nothing in the process recovers the GPU, not even cudaDeviceReset; a kernel that never
// ends returns nothing, fails nothing, holds its stream and Close; the other process's work
// is never affected.
func TestFaultKinds(t *testing.T) {
	testgpu.Need(t, testdev.GPU(), "the cuda backend sees no device")
	ctx := testdev.Ctx(t)
	parent := openDev(t, []device.Option{device.WithBackend(device.BackendCUDA), device.WithKernelCache(t.TempDir())})
	_, good, err := compileGood(ctx, parent)
	require.NoError(t, err)
	other := otherProcess{dev: parent, good: good}
	require.True(t, other.check().OK, "the parent's own GPU work, before any fault")

	var rows []string
	for _, kind := range faultKinds {
		t.Run(kind.name, func(t *testing.T) {
			run := runFaultChild(t, kind, other)
			r := run.report
			b, _ := json.Marshal(r)
			t.Logf("child report: %s", b)
			t.Logf("other process: during %v, after %v; child exited by itself: %v (%v)", run.during, run.after, run.exited, run.exitTook.Round(time.Millisecond))
			if r.OthersSkip != "" {
				t.Logf("other devices in the faulted process: skipped, %s", r.OthersSkip)
			}
			if !r.Final {
				t.Errorf("no final report; stdout:\n%s\nstderr:\n%s", run.stdout, run.stderr)
			}
			rows = append(rows, fmt.Sprintf("| %s | %s | %v | %v | twin Err %q, twin malloc %v; malloc: %v; relaunch: %v; new stream: %v | during: %v; after: %v | %s | raw: malloc %v, last error %v, sync %v; re-open: %v (Err %q); malloc %v; launch %v; close %v; reset %v; after reset: raw malloc %v, open and launch %v |",
				kind.name, kind.how, r.Launch, r.DevFailed, r.TwinErr, r.TwinMalloc, r.Malloc, r.Relaunch, r.NewStream, run.during, run.after,
				othersCell(r.Others, r.OthersSkip), r.RawMalloc, r.RawLastError, r.RawSync, r.Reopen, r.ReopenErr, r.ReopenMalloc, r.ReopenLaunch,
				r.Close, r.Reset, r.AfterResetRaw, r.AfterReset))

			assert.True(t, run.during.OK, "another process on the GPU, while the faulted one lives: %v", run.during)
			assert.True(t, run.after.OK, "another process on the GPU, after the faulted one ended: %v", run.after)
			// The other GPUs of the faulted process: a kernel that never ends leaves them alone,
			// but a sticky fault is the whole process's: the runtime answers the fault's code for
			// every device (two H200s), which is why a device that must outlive another's fault
			// runs Isolated.
			if r.OthersSkip == "" && !kind.resetFirst {
				for i, o := range r.Others {
					if kind.want == 0 {
						assert.True(t, o.OK, "device %d beside a spinning kernel: %v", i+1, o)
					} else {
						assert.True(t, o.Failed, "device %d in the faulted process fails too: %v", i+1, o)
						assert.Equal(t, int32(kind.want), o.Code, "device %d in the faulted process: %v", i+1, o)
					}
				}
			}
			if kind.want == 0 { // a kernel that never ends
				assert.True(t, r.Launch.Hung, "the spinning kernel's launch: %v", r.Launch)
				assert.False(t, r.DevFailed, "a kernel still running is no fault")
				if kind.resetFirst {
					assert.True(t, r.Reset.Hung, "cudaDeviceReset waits for the spinning kernel: %v", r.Reset)
					return
				}
				assert.True(t, r.Malloc.OK, "Malloc beside a spinning kernel: %v", r.Malloc)
				assert.True(t, r.Relaunch.Hung, "work queued behind the spinning kernel: %v", r.Relaunch)
				assert.True(t, r.NewStream.OK, "a new stream beside the spinning kernel: %v", r.NewStream)
				assert.True(t, r.RawMalloc.OK, "cudaMalloc beside a spinning kernel: %v", r.RawMalloc)
				assert.True(t, r.RawLastError.OK, "nothing failed: %v", r.RawLastError)
				assert.True(t, r.Reopen.OK, "a new Device beside a spinning kernel: %v", r.Reopen)
				assert.True(t, r.ReopenMalloc.OK, "its Malloc: %v", r.ReopenMalloc)
				assert.True(t, r.RawSync.Hung, "cudaDeviceSynchronize behind the spinning kernel: %v", r.RawSync)
				assert.True(t, r.Close.Hung, "Close waits for the spinning kernel: %v", r.Close)
				return
			}
			want := int32(kind.want)
			assert.True(t, kind.want.Sticky(), "cudaerr lists %v as sticky", kind.want)
			assert.Equal(t, want, r.Launch.Code, "the launch's code: %v", r.Launch)
			assert.True(t, r.Launch.Failed, "the launch's error matches ErrDeviceFailed: %v", r.Launch)
			assert.True(t, r.DevFailed, "dev.Err() matches ErrDeviceFailed: %q", r.DevErr)
			assert.NotEmpty(t, r.TwinErr, "a second Device on the GPU knows of the failure before any call")
			for what, o := range map[string]outcome{
				"Malloc": r.Malloc, "a good launch": r.Relaunch, "a new stream": r.NewStream, "the twin's Malloc": r.TwinMalloc,
			} {
				assert.True(t, o.Failed, "%s on the failed GPU: %v", what, o)
				assert.Equal(t, want, o.Code, "%s on the failed GPU: %v", what, o)
			}
			// The runtime itself: every call answers the fault's code; a new Device fails to
			// open with it. cudaGetLastError answers it too, or nothing: after a trap, an H200
			// has already cleared it (an H100 has not).
			for what, o := range map[string]outcome{
				"cudaMalloc": r.RawMalloc, "cudaDeviceSynchronize": r.RawSync, "Open": r.Reopen,
			} {
				assert.Equal(t, want, o.Code, "%s after the fault: %v", what, o)
			}
			if !r.RawLastError.OK {
				assert.Equal(t, want, r.RawLastError.Code, "cudaGetLastError after the fault: %v", r.RawLastError)
			}
			assert.True(t, r.Close.OK, "Close of the failed device: %v", r.Close)
			// cudaDeviceReset succeeds, yet nothing works after it: no recovery in the process.
			assert.True(t, r.Reset.OK, "cudaDeviceReset: %v", r.Reset)
			assert.False(t, r.AfterResetRaw.OK, "cudaMalloc after the reset: %v", r.AfterResetRaw)
			assert.False(t, r.AfterReset.OK, "a new Device after the reset: %v", r.AfterReset)
		})
	}
	t.Logf("fault table:\n| kind | how | launch | dev failed | later calls | other process | other devices | in-process recovery |\n|---|---|---|---|---|---|---|---|\n%s", strings.Join(rows, "\n"))
}

// othersCell is the table cell of the other devices' outcomes: one outcome for all when they
// agree (as they do on a host of like GPUs), else each device's.
func othersCell(outs []outcome, skip string) string {
	switch {
	case skip != "":
		return "skipped: " + skip
	case len(outs) == 0:
		return "not run"
	}
	cells := make([]string, len(outs))
	same := true
	for i, o := range outs {
		cells[i] = fmt.Sprintf("device %d: %v", i+1, o)
		same = same && o.String() == outs[0].String()
	}
	switch {
	case same && len(outs) == 1:
		return cells[0]
	case same:
		return fmt.Sprintf("%v (devices 1–%d)", outs[0], len(outs))
	}
	return strings.Join(cells, "; ")
}

// openOthers opens devices 1 to n-1 and runs a good round trip on each, in parallel (each
// compiles its kernels), returning the devices and their good kernels. Closing them is the
// caller's: the fault probe's child leaves them to its exit, as a Close after the fault may
// never return.
func openOthers(t *testing.T, ctx context.Context, n int, opts []device.Option) ([]*device.Device, []*device.Kernel) {
	t.Helper()
	devs, goods := make([]*device.Device, n-1), make([]*device.Kernel, n-1)
	var g errgroup.Group
	for i := range devs {
		g.Go(func() (err error) {
			if devs[i], err = device.Open(ctx, i+1, opts...); err != nil {
				return err
			}
			if _, goods[i], err = compileGood(ctx, devs[i]); err != nil {
				return err
			}
			return goodRound(ctx, streams.Default(devs[i]), devs[i], goods[i])
		})
	}
	require.NoError(t, g.Wait())
	return devs, goods
}

// boundedEach runs a good round trip on each of devs, with its kernel of goods, all at once,
// each bounded by d: a GPU the fault left stuck costs d once, not once a device.
func boundedEach(d time.Duration, devs []*device.Device, goods []*device.Kernel) []outcome {
	out := make([]outcome, len(devs))
	var wg sync.WaitGroup
	for i, dev := range devs {
		wg.Go(func() {
			out[i] = bounded(d, func(ctx context.Context) error { return goodRound(ctx, streams.Default(dev), dev, goods[i]) })
		})
	}
	wg.Wait()
	return out
}
