package interop_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/internal/testgpu"
	"github.com/gpuactor/gpuactor/interop"
	"github.com/gpuactor/gpuactor/streams"
)

// The multi-process tests run this test binary again as the other process: the child runs
// TestIPCChild, which does nothing unless ipcChildEnv names its role and ipcSockEnv the Unix
// socket the parent listens on.
const (
	ipcChildEnv = "GPUACTOR_IPC_CHILD"
	ipcSockEnv  = "GPUACTOR_IPC_SOCK"
	ipcWords    = 1 << 18 // 1 MiB of uint32
	crossWords  = 1 << 16 // each GPU's export in TestIPCGPUAcrossDevices
)

// startChild listens on a socket, starts this binary as role and returns the accepted
// connection and the running child.
func startChild(t *testing.T, role string) (*net.UnixConn, *exec.Cmd) {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "ipc.sock")
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	require.NoError(t, err)
	defer l.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestIPCChild$", "-test.v")
	cmd.Env = append(os.Environ(), ipcChildEnv+"="+role, ipcSockEnv+"="+sock)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	conn, err := l.AcceptUnix()
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return conn, cmd
}

func openCUDA(t *testing.T, ctx context.Context) *device.Device {
	t.Helper()
	testgpu.Need(t, testdev.GPU(), "the cuda backend sees no device")
	return testdev.Open(t, ctx, []device.Option{device.WithBackend(device.BackendCUDA), device.WithKernelCache(t.TempDir())})
}

func pattern(n int, salt uint32) []uint32 {
	p := make([]uint32, n)
	for i := range p {
		p[i] = uint32(i)*2654435761 + salt
	}
	return p
}

// TestIPCGPU: the parent exports memory, an event and a pool allocation; the child opens
// them, checks the contents, adds 1 to the memory with a kernel, records the event, and
// fills the pool allocation with 7; the parent waits on the event and checks both.
func TestIPCGPU(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev := openCUDA(t, ctx)
	s, err := streams.New(ctx, dev)
	require.NoError(t, err)

	buf, err := dev.MallocBytes(ctx, ipcWords*4)
	require.NoError(t, err)
	testdev.Write(t, ctx, buf, pattern(ipcWords, 1))
	mh, err := interop.ExportMemory(ctx, buf)
	require.NoError(t, err)
	ev, err := streams.NewEvent(ctx, dev, streams.Interprocess, streams.DisableTiming)
	require.NoError(t, err)
	eh, err := interop.ExportEvent(ctx, ev)
	require.NoError(t, err)

	// Opening one's own handles is refused with a clear error.
	_, err = interop.OpenMemory(ctx, dev, mh, ipcWords*4)
	require.ErrorIs(t, err, interop.ErrOwnHandle)
	_, err = interop.OpenEvent(ctx, dev, eh)
	require.ErrorIs(t, err, interop.ErrOwnHandle)

	pool, err := alloc.NewPool(ctx, dev, alloc.ExportAs(alloc.HandlePosixFD))
	require.NoError(t, err)
	pb, _, err := alloc.MallocAsync[uint32](ctx, s, ipcWords, alloc.FromPool(pool))
	require.NoError(t, err)
	require.NoError(t, streams.CopyToDevice(ctx, s, pb, pattern(ipcWords, 2)).Wait(ctx))
	pf, err := interop.ExportPool(ctx, pool)
	require.NoError(t, err)
	pp, err := interop.ExportPointer(ctx, pb)
	require.NoError(t, err)

	conn, cmd := startChild(t, "importer")
	msg := append(append(mh[:], eh[:]...), pp[:]...)
	require.NoError(t, interop.SendHandle(conn, pf, msg))
	require.NoError(t, pf.Close())

	_, reply, err := interop.ReceiveHandle(conn) // the child has queued its work and recorded ev
	require.NoError(t, err)
	require.Equal(t, "recorded", string(reply))
	require.NoError(t, s.Wait(ctx, ev).Wait(ctx))
	got := make([]uint32, ipcWords)
	require.NoError(t, streams.CopyFromDevice(ctx, s, got, buf).Wait(ctx))
	want := pattern(ipcWords, 1)
	for i := range want {
		want[i]++
	}
	require.Equal(t, want, got, "the child's kernel wrote through the imported memory")
	require.NoError(t, streams.CopyFromDevice(ctx, s, got, pb).Wait(ctx))
	for i, v := range got {
		if v != 7 {
			t.Fatalf("pool allocation word %d is %d, the child wrote 7", i, v)
		}
	}
	require.NoError(t, interop.SendHandle(conn, nil, []byte("ack")))
	_, reply, err = interop.ReceiveHandle(conn) // the child has closed its imports
	require.NoError(t, err)
	require.Equal(t, "closed", string(reply))
	require.NoError(t, cmd.Wait())

	require.NoError(t, pb.Close(ctx))
	require.NoError(t, s.Synchronize(ctx))
	require.NoError(t, pool.Close(ctx))
	require.NoError(t, ev.Close(ctx))
	require.NoError(t, buf.Close(ctx))
	require.NoError(t, s.Close(ctx))
}

// TestIPCGPUExporterExits: the child exports memory and exits while this process still holds
// the import; closing the import is clean, the handle no longer opens, and the device works.
func TestIPCGPUExporterExits(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev := openCUDA(t, ctx)
	conn, cmd := startChild(t, "exporter")
	_, msg, err := interop.ReceiveHandle(conn)
	require.NoError(t, err)
	var mh interop.MemHandle
	require.NoError(t, mh.UnmarshalBinary(msg))

	imp, err := interop.OpenMemory(ctx, dev, mh, ipcWords*4)
	require.NoError(t, err)
	_, err = interop.OpenMemory(ctx, dev, mh, ipcWords*4)
	require.ErrorIs(t, err, interop.ErrAlreadyOpen)
	got := make([]uint32, ipcWords)
	testdev.Read(t, ctx, got, imp)
	require.Equal(t, pattern(ipcWords, 3), got)

	require.NoError(t, interop.SendHandle(conn, nil, []byte("opened")))
	require.NoError(t, cmd.Wait()) // the exporter exits without freeing anything itself

	require.NoError(t, imp.Close(ctx), "closing an import whose exporter exited is clean")
	_, err = interop.OpenMemory(ctx, dev, mh, ipcWords*4)
	require.Error(t, err, "the handle of an exited exporter does not open")
	t.Logf("opening the handle of an exited exporter: %v", err)

	// Garbage is refused clearly.
	var junk interop.MemHandle
	for i := range junk {
		junk[i] = byte(0xA5 ^ i)
	}
	_, err = interop.OpenMemory(ctx, dev, junk, 4096)
	require.Error(t, err)
	var ce *cudaerr.Error
	require.True(t, errors.Is(err, interop.ErrBadHandle) || errors.As(err, &ce), "%v", err)
	_, err = interop.OpenEvent(ctx, dev, interop.EventHandle(junk))
	require.Error(t, err)

	// The device is still usable.
	b, err := dev.MallocBytes(ctx, 4096)
	require.NoError(t, err)
	testdev.Write(t, ctx, b, pattern(1024, 9))
	back := make([]uint32, 1024)
	testdev.Read(t, ctx, back, b)
	require.Equal(t, pattern(1024, 9), back)
	require.NoError(t, b.Close(ctx))
}

// TestIPCGPUAcrossDevices: memory and an event exported on each GPU are opened by a child
// process on another GPU, the next one round the ring that can access the exporter's memory:
// there the child's kernel adds 1 through the imported memory and its stream records the
// imported event, which the exporting GPU's stream in the parent waits for before the parent
// reads the memory back. On a host whose GPUs are all linked every GPU exports once and
// imports once; one child serves every pair, so a host of eight starts one process, not 56.
func TestIPCGPUAcrossDevices(t *testing.T) {
	testgpu.Need(t, testdev.GPU(), "the cuda backend sees no device")
	ctx := testdev.Ctx(t)
	devs := testdev.All(t, ctx, []device.Option{device.WithBackend(device.BackendCUDA), device.WithKernelCache(t.TempDir())})
	type export struct {
		from, to int
		s        *streams.Stream
		buf      *device.Buffer
		ev       *streams.Event
	}
	var exports []export
	var msg []byte
	for i, d := range devs {
		to := -1
		for k := 1; k < len(devs) && to < 0; k++ {
			j := (i + k) % len(devs)
			can, err := interop.CanAccessPeer(ctx, devs[j], d)
			require.NoError(t, err)
			if can {
				to = j
			}
		}
		if to < 0 {
			t.Logf("no GPU can access GPU %d's memory: it exports nothing", i)
			continue
		}
		s, err := streams.New(ctx, d)
		require.NoError(t, err)
		buf, err := d.MallocBytes(ctx, crossWords*4)
		require.NoError(t, err)
		testdev.Write(t, ctx, buf, pattern(crossWords, uint32(i)))
		mh, err := interop.ExportMemory(ctx, buf)
		require.NoError(t, err)
		ev, err := streams.NewEvent(ctx, d, streams.Interprocess, streams.DisableTiming)
		require.NoError(t, err)
		eh, err := interop.ExportEvent(ctx, ev)
		require.NoError(t, err)
		exports = append(exports, export{from: i, to: to, s: s, buf: buf, ev: ev})
		msg = binary.LittleEndian.AppendUint32(msg, uint32(i))
		msg = binary.LittleEndian.AppendUint32(msg, uint32(to))
		msg = append(append(msg, mh[:]...), eh[:]...)
	}
	if len(exports) == 0 {
		t.Skip("no two GPUs of the machine are linked")
	}

	conn, cmd := startChild(t, "crossimporter")
	require.NoError(t, interop.SendHandle(conn, nil, msg))
	_, reply, err := interop.ReceiveHandle(conn) // the child has queued its kernels and recorded the events
	require.NoError(t, err)
	require.Equal(t, "recorded", string(reply))
	for _, e := range exports {
		require.NoError(t, e.s.Wait(ctx, e.ev).Wait(ctx))
		got := make([]uint32, crossWords)
		require.NoError(t, streams.CopyFromDevice(ctx, e.s, got, e.buf).Wait(ctx))
		want := pattern(crossWords, uint32(e.from))
		for k := range want {
			want[k]++
		}
		require.Equal(t, want, got, "GPU %d's memory, written by the child's kernel on GPU %d", e.from, e.to)
	}
	require.NoError(t, interop.SendHandle(conn, nil, []byte("ack")))
	_, reply, err = interop.ReceiveHandle(conn) // the child has closed its imports
	require.NoError(t, err)
	require.Equal(t, "closed", string(reply))
	require.NoError(t, cmd.Wait())
	for _, e := range exports {
		require.NoError(t, e.ev.Close(ctx))
		require.NoError(t, e.buf.Close(ctx))
		require.NoError(t, e.s.Close(ctx))
	}
}

// TestIPCFDAcrossProcesses passes a file descriptor to another process and back: no GPU.
func TestIPCFDAcrossProcesses(t *testing.T) {
	conn, cmd := startChild(t, "fdecho")
	f := tempFile(t, "across processes")
	require.NoError(t, interop.SendHandle(conn, f, []byte("hello")))
	got, payload, err := interop.ReceiveHandle(conn)
	require.NoError(t, err)
	require.Equal(t, "hello, back", string(payload))
	require.NotNil(t, got)
	buf := make([]byte, 64)
	n, _ := got.ReadAt(buf, 0)
	require.Equal(t, "across processes, appended by the child", string(buf[:n]))
	require.NoError(t, got.Close())
	require.NoError(t, cmd.Wait())
}

// TestIPCChild is the other process of the tests above; run alone, it does nothing.
func TestIPCChild(t *testing.T) {
	role := os.Getenv(ipcChildEnv)
	if role == "" {
		t.Skip("the child process of the IPC tests")
	}
	conn, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: os.Getenv(ipcSockEnv), Net: "unix"})
	require.NoError(t, err)
	defer conn.Close()
	switch role {
	case "fdecho":
		f, payload, err := interop.ReceiveHandle(conn)
		require.NoError(t, err)
		_, err = f.WriteAt([]byte(", appended by the child"), int64(len("across processes")))
		require.NoError(t, err)
		require.NoError(t, interop.SendHandle(conn, f, append(payload, ", back"...)))
		require.NoError(t, f.Close())
	case "importer":
		ipcImporter(t, conn)
	case "exporter":
		ipcExporter(t, conn)
	case "crossimporter":
		ipcCrossImporter(t, conn)
	default:
		t.Fatalf("unknown role %q", role)
	}
}

func ipcImporter(t *testing.T, conn *net.UnixConn) {
	ctx := testdev.Ctx(t)
	dev := openCUDA(t, ctx)
	pf, msg, err := interop.ReceiveHandle(conn)
	require.NoError(t, err)
	require.NotNil(t, pf)
	require.Len(t, msg, 3*interop.HandleSize)
	var mh interop.MemHandle
	var eh interop.EventHandle
	var pp interop.PoolPointer
	copy(mh[:], msg)
	copy(eh[:], msg[64:])
	copy(pp[:], msg[128:])

	mem, err := interop.OpenMemory(ctx, dev, mh, ipcWords*4)
	require.NoError(t, err)
	_, err = interop.OpenMemory(ctx, dev, mh, ipcWords*4)
	require.ErrorIs(t, err, interop.ErrAlreadyOpen)
	ev, err := interop.OpenEvent(ctx, dev, eh)
	require.NoError(t, err)
	pool, err := interop.ImportPool(ctx, dev, pf)
	require.NoError(t, err)
	require.NoError(t, pf.Close())
	pmem, err := interop.ImportPointer(ctx, pool, pp, ipcWords*4)
	require.NoError(t, err)

	s, err := streams.New(ctx, dev)
	require.NoError(t, err)
	got := make([]uint32, ipcWords)
	require.NoError(t, streams.CopyFromDevice(ctx, s, got, mem).Wait(ctx))
	require.Equal(t, pattern(ipcWords, 1), got, "the exporter's contents")
	require.NoError(t, streams.CopyFromDevice(ctx, s, got, pmem).Wait(ctx))
	require.Equal(t, pattern(ipcWords, 2), got, "the pool allocation's contents")

	mod, err := dev.Compile(ctx, device.Source{Name: "ipc_test.cu", Code: testdev.AddU32, Sim: map[string]cuda.SimKernel{"add_u32": testdev.AddU32Sim}})
	require.NoError(t, err)
	add, err := mod.Kernel(ctx, "add_u32")
	require.NoError(t, err)
	launched := s.Launch(ctx, add, cuda.LaunchConfig{Grid: cuda.Dim3{X: ipcWords / 256, Y: 1, Z: 1}, Block: cuda.Dim3{X: 256, Y: 1, Z: 1}},
		mem, uint32(1), int32(ipcWords))
	written := streams.CopyToDevice(ctx, s, pmem, testdev.Filled(ipcWords, 7))
	recorded := s.Record(ctx, ev)
	for _, f := range []*streams.Future{launched, written, recorded} {
		require.NoError(t, f.Wait(ctx))
	}
	require.NoError(t, interop.SendHandle(conn, nil, []byte("recorded")))

	_, reply, err := interop.ReceiveHandle(conn)
	require.NoError(t, err)
	require.Equal(t, "ack", string(reply))
	require.NoError(t, pmem.Close(ctx))
	require.NoError(t, mem.Close(ctx))
	require.NoError(t, ev.Close(ctx))
	require.NoError(t, s.Synchronize(ctx))
	require.NoError(t, pool.Close(ctx))
	require.NoError(t, s.Close(ctx))
	require.NoError(t, interop.SendHandle(conn, nil, []byte("closed")))
}

// ipcCrossImporter is TestIPCGPUAcrossDevices' child: for each export the parent lists (the
// exporting GPU, the GPU to import on, the memory's and the event's handles), it opens both on
// the importing GPU, adds 1 to the memory with a kernel there and records the event behind it.
func ipcCrossImporter(t *testing.T, conn *net.UnixConn) {
	ctx := testdev.Ctx(t)
	testgpu.Need(t, testdev.GPU(), "the cuda backend sees no device")
	devs := testdev.All(t, ctx, []device.Option{device.WithBackend(device.BackendCUDA), device.WithKernelCache(t.TempDir())})
	_, msg, err := interop.ReceiveHandle(conn)
	require.NoError(t, err)
	const entry = 8 + 2*interop.HandleSize
	require.NotEmpty(t, msg)
	require.Zero(t, len(msg)%entry)
	kernels := map[int]*device.Kernel{}
	var mems []*device.Buffer
	var evs []*streams.Event
	var futs []*streams.Future
	for ; len(msg) > 0; msg = msg[entry:] {
		from, to := int(binary.LittleEndian.Uint32(msg)), int(binary.LittleEndian.Uint32(msg[4:]))
		var mh interop.MemHandle
		var eh interop.EventHandle
		copy(mh[:], msg[8:])
		copy(eh[:], msg[8+interop.HandleSize:])
		dev := devs[to]
		if kernels[to] == nil {
			mod, err := dev.Compile(ctx, device.Source{Name: "ipc_test.cu", Code: testdev.AddU32, Sim: map[string]cuda.SimKernel{"add_u32": testdev.AddU32Sim}})
			require.NoError(t, err)
			kernels[to], err = mod.Kernel(ctx, "add_u32")
			require.NoError(t, err)
		}
		mem, err := interop.OpenMemory(ctx, dev, mh, crossWords*4)
		require.NoError(t, err, "GPU %d's memory on GPU %d", from, to)
		ev, err := interop.OpenEvent(ctx, dev, eh)
		require.NoError(t, err, "GPU %d's event on GPU %d", from, to)
		mems, evs = append(mems, mem), append(evs, ev)
		s := streams.Default(dev)
		futs = append(futs,
			s.Launch(ctx, kernels[to], cuda.LaunchConfig{Grid: cuda.Dim(crossWords / 256), Block: cuda.Dim(256)}, mem, uint32(1), int32(crossWords)),
			s.Record(ctx, ev))
	}
	for _, f := range futs {
		require.NoError(t, f.Wait(ctx))
	}
	require.NoError(t, interop.SendHandle(conn, nil, []byte("recorded")))

	_, reply, err := interop.ReceiveHandle(conn)
	require.NoError(t, err)
	require.Equal(t, "ack", string(reply))
	for k := range mems {
		require.NoError(t, mems[k].Close(ctx))
		require.NoError(t, evs[k].Close(ctx))
	}
	for _, d := range devs {
		require.NoError(t, d.Synchronize(ctx))
	}
	require.NoError(t, interop.SendHandle(conn, nil, []byte("closed")))
}

func ipcExporter(t *testing.T, conn *net.UnixConn) {
	ctx := testdev.Ctx(t)
	dev := openCUDA(t, ctx)
	buf, err := dev.MallocBytes(ctx, ipcWords*4)
	require.NoError(t, err)
	testdev.Write(t, ctx, buf, pattern(ipcWords, 3))
	mh, err := interop.ExportMemory(ctx, buf)
	require.NoError(t, err)
	require.NoError(t, interop.SendHandle(conn, nil, mh[:]))
	_, reply, err := interop.ReceiveHandle(conn)
	require.NoError(t, err)
	require.Equal(t, "opened", string(reply))
	fmt.Println("exporter: exiting with its buffer exported and open elsewhere")
	os.Exit(0) // no Close: the process ends under the importer
}
