//go:build linux

package interop_test

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/internal/testgpu"
	"github.com/gpuactor/gpuactor/interop"
	"github.com/gpuactor/gpuactor/streams"
)

// The exporter tests run helper programs (interop/testdata/exporter, built by
// interop/testdata/run-exporters.sh) that export memory and semaphores from another API in
// another process and hand the descriptors over a Unix socket; the protocol is in
// exporter/common.h.
const (
	exporterDirEnv     = "GPUACTOR_EXPORTER_DIR"
	requireExternalEnv = "GPUACTOR_REQUIRE_EXTERNAL"
)

func openExternalGPU(t *testing.T, ctx context.Context) *device.Device {
	t.Helper()
	testgpu.Need(t, testdev.GPU(), "the cuda backend sees no device")
	return testdev.Open(t, ctx, []device.Option{device.WithBackend(device.BackendCUDA), device.WithKernelCache(t.TempDir())})
}

// exporter is a running exporter: its socket, the line it sent and its descriptors.
type exporter struct {
	conn   *net.UnixConn
	kind   string
	size   uint64
	words  uint64
	fields []string
	fds    []int
}

// startExporter runs the exporter named name from $GPUACTOR_EXPORTER_DIR, skipping the test
// where that is unset (failing under GPUACTOR_REQUIRE_EXTERNAL=1), and takes its descriptors.
func startExporter(t *testing.T, name string, nfds int) *exporter {
	t.Helper()
	dir := os.Getenv(exporterDirEnv)
	if dir == "" {
		msg := exporterDirEnv + " is not set: build the exporters with interop/testdata/run-exporters.sh"
		if os.Getenv(requireExternalEnv) == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	bin := filepath.Join(dir, name)
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv(requireExternalEnv) == "1" {
			t.Fatalf("exporter %s: %v", bin, err)
		}
		t.Skipf("exporter %s not built: %v", bin, err)
	}
	sock := filepath.Join(t.TempDir(), "x.sock")
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	require.NoError(t, err)
	defer l.Close()
	cmd := exec.Command(bin, sock)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		select {
		case <-exited:
		case <-time.After(30 * time.Second): // it should have finished with its verdict
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	require.NoError(t, l.SetDeadline(time.Now().Add(60*time.Second)))
	conn, err := l.AcceptUnix()
	if err != nil {
		select {
		case werr := <-exited:
			t.Fatalf("exporter %s exited before connecting: %v", name, werr)
		default:
		}
		require.NoError(t, err)
	}
	t.Cleanup(func() { _ = conn.Close() })

	buf, oob := make([]byte, 256), make([]byte, syscall.CmsgSpace(4*4))
	n, oobn, _, _, err := conn.ReadMsgUnix(buf, oob)
	require.NoError(t, err)
	msgs, err := syscall.ParseSocketControlMessage(oob[:oobn])
	require.NoError(t, err)
	e := &exporter{conn: conn}
	for _, m := range msgs {
		fds, err := syscall.ParseUnixRights(&m)
		require.NoError(t, err)
		e.fds = append(e.fds, fds...)
	}
	for _, fd := range e.fds {
		t.Cleanup(func() { _ = syscall.Close(fd) })
	}
	require.Len(t, e.fds, nfds, "descriptors from %s", name)
	e.fields = strings.Fields(string(buf[:n]))
	require.GreaterOrEqual(t, len(e.fields), 3, "line from %s: %q", name, buf[:n])
	e.kind = e.fields[0]
	_, err = fmt.Sscan(e.fields[1]+" "+e.fields[2], &e.size, &e.words)
	require.NoError(t, err)
	return e
}

// finish tells the exporter the memory is written and returns its verdict.
func (e *exporter) finish(t *testing.T) {
	t.Helper()
	_, err := e.conn.Write([]byte{'c'})
	require.NoError(t, err)
	require.NoError(t, e.conn.SetReadDeadline(time.Now().Add(60*time.Second)))
	line, err := bufio.NewReader(e.conn).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "OK\n", line, "the exporter read back what the GPU wrote")
}

// checkAndRewrite reads buf on s, checks the exporter's pattern (word i = i*3+1) and writes
// the test's (i*5+2), waiting for both.
func checkAndRewrite(t *testing.T, ctx context.Context, s *streams.Stream, buf device.Mem, words uint64) {
	t.Helper()
	got := make([]uint32, words)
	require.NoError(t, streams.CopyFromDevice(ctx, s, got, buf).Wait(ctx))
	for i, w := range got {
		if w != uint32(i*3+1) {
			t.Fatalf("word %d of the imported memory is %d, want %d", i, w, i*3+1)
		}
	}
	for i := range got {
		got[i] = uint32(i*5 + 2)
	}
	require.NoError(t, streams.CopyToDevice(ctx, s, buf, got).Wait(ctx))
}

// importDriverAPIMemory runs the driver-API exporter and imports its memory into a GPU, mapped
// whole as buf, with a stream s to use it on.
func importDriverAPIMemory(t *testing.T, ctx context.Context) (e *exporter, m *interop.ExternalMemory, s *streams.Stream, buf *device.Buffer) {
	t.Helper()
	dev := openExternalGPU(t, ctx)
	e = startExporter(t, "cuda_exporter", 1)
	require.Equal(t, "cuda", e.kind)
	m, err := interop.ImportMemory(ctx, dev, e.fds[0], e.size)
	require.NoError(t, err)
	s, err = streams.New(ctx, dev)
	require.NoError(t, err)
	buf, err = m.MapBuffer(ctx, 0, e.size)
	require.NoError(t, err)
	return e, m, s, buf
}

// Memory the CUDA driver API exported (cuMemCreate + cuMemExportToShareableHandle) in another
// process, imported, mapped, read and written; the exporter checks the writes.
func TestExternalMemoryFromDriverAPIExporter(t *testing.T) {
	ctx := testdev.Ctx(t)
	e, m, s, buf := importDriverAPIMemory(t, ctx)
	checkAndRewrite(t, ctx, s, buf, e.words)

	// A second mapping of the second half sees the same memory.
	half, err := m.MapBuffer(ctx, e.size/2, e.size/2)
	require.NoError(t, err)
	got := make([]uint32, 4)
	require.NoError(t, streams.CopyFromDevice(ctx, s, got, half.Slice(0, 16)).Wait(ctx))
	w0 := e.words / 2
	assert.Equal(t, []uint32{uint32(w0*5 + 2), uint32((w0+1)*5 + 2), uint32((w0+2)*5 + 2), uint32((w0+3)*5 + 2)}, got)

	require.NoError(t, s.Synchronize(ctx))
	e.finish(t)
	require.NoError(t, buf.Close(ctx))
	require.NoError(t, m.Close(ctx)) // closes half too
	require.ErrorIs(t, half.Close(ctx), core.ErrClosed)
}

// Memory the CUDA driver API exported in another process, imported and mapped as a mipmapped
// array beside a buffer over the same bytes: every level takes a copy in and gives it back, and
// level 0's values land in the imported memory (found through the buffer, whatever the array's
// layout); then the buffer writes the test's pattern, which the exporter checks.
func TestExternalMipmappedArrayFromDriverAPIExporter(t *testing.T) {
	ctx := testdev.Ctx(t)
	e, m, s, buf := importDriverAPIMemory(t, ctx)
	words := make([]uint32, e.words)
	require.NoError(t, streams.CopyFromDevice(ctx, s, words, buf).Wait(ctx))
	for i, w := range words {
		if w != uint32(i*3+1) {
			t.Fatalf("word %d of the imported memory is %d, want %d", i, w, i*3+1)
		}
	}

	const side = 256
	a, err := m.MapMipmappedArray(ctx, 0, cuda.Channels[float32](1), alloc.Extent{W: side, H: side}, 3)
	require.NoError(t, err)
	require.Equal(t, 3, a.Levels())
	var level0 []float32
	for i := range a.Levels() {
		l, err := a.Level(ctx, i)
		require.NoError(t, err)
		w := side >> i
		require.Equal(t, alloc.Extent{W: w, H: w}, l.Extent(), "level %d", i)
		in := make([]float32, w*w)
		for j := range in {
			in[j] = float32(i*100000+j) + 0.5
		}
		require.NoError(t, alloc.CopyToArray(ctx, s, l, l.Whole(), in).Wait(ctx))
		out := make([]float32, len(in))
		require.NoError(t, alloc.CopyFromArray(ctx, s, out, l, l.Whole()).Wait(ctx))
		require.Equal(t, in, out, "level %d", i)
		if i == 0 {
			level0 = in
		}
	}
	require.NoError(t, streams.CopyFromDevice(ctx, s, words, buf).Wait(ctx))
	seen := make(map[uint32]bool, len(words))
	for _, w := range words {
		seen[w] = true
	}
	for j, v := range level0 {
		if !seen[math.Float32bits(v)] {
			t.Fatalf("level 0's element %d (%v) is nowhere in the imported memory", j, v)
		}
	}
	require.NoError(t, a.Close(ctx))

	for i := range words {
		words[i] = uint32(i*5 + 2)
	}
	require.NoError(t, streams.CopyToDevice(ctx, s, buf, words).Wait(ctx))
	require.NoError(t, s.Synchronize(ctx))
	e.finish(t)
	require.NoError(t, m.Close(ctx)) // closes buf too
	require.ErrorIs(t, a.Close(ctx), core.ErrClosed)
}

// Memory and a timeline semaphore Vulkan exported in another process: the stream waits for
// Vulkan's signal (1), reads and writes the memory, and signals 2, which Vulkan waits for.
func TestExternalVulkanMemoryAndTimeline(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev := openExternalGPU(t, ctx)
	e := startExporter(t, "vk_exporter", 2)
	require.Equal(t, "vk", e.kind)
	var opts []interop.ImportOption
	if len(e.fields) > 3 && e.fields[3] == "dedicated" {
		opts = append(opts, interop.Dedicated())
	}

	m, err := interop.ImportMemory(ctx, dev, e.fds[0], e.size, opts...)
	require.NoError(t, err)
	sem, err := interop.ImportSemaphore(ctx, dev, e.fds[1], interop.TimelineSemaphore)
	require.NoError(t, err)
	s, err := streams.New(ctx, dev)
	require.NoError(t, err)
	// The allocation may be larger than the buffer Vulkan filled: map the buffer's words.
	buf, err := m.MapBuffer(ctx, 0, e.words*4)
	require.NoError(t, err)

	require.NoError(t, sem.Wait(ctx, s, 1).Wait(ctx), "Vulkan signals 1 once the memory is filled")
	checkAndRewrite(t, ctx, s, buf, e.words)
	require.NoError(t, sem.Signal(ctx, s, 2).Wait(ctx))
	e.finish(t)
	require.NoError(t, sem.Close(ctx))
	require.NoError(t, m.Close(ctx))
}

// The real runtime refuses a descriptor that is no exported memory: a clear error, the
// duplicate closed, the device usable.
func TestExternalCUDARefusesPlainFile(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev := openExternalGPU(t, ctx)
	f := externalFile(t)
	_, err := f.Write(make([]byte, 1<<16))
	require.NoError(t, err)
	before := openFDs(t)
	_, err = interop.ImportMemory(ctx, dev, int(f.Fd()), 1<<16)
	require.Error(t, err)
	t.Logf("ImportMemory of a plain file: %v", err)
	_, err = interop.ImportSemaphore(ctx, dev, int(f.Fd()), interop.TimelineSemaphore)
	require.Error(t, err)
	assert.Equal(t, before, openFDs(t))

	buf, err := dev.MallocBytes(ctx, 4096)
	require.NoError(t, err)
	require.NoError(t, streams.Default(dev).Memset(ctx, buf, 1).Wait(ctx))
}
