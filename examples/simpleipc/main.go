// Command simpleipc is NVIDIA's simpleIPC sample done the gpuactor way: one process per GPU.
// The parent allocates 64 MiB and an interprocess event on each GPU, puts their handles
// (package interop) in a shared-memory slab, and starts one child per GPU. Each child opens
// every buffer and event, and in step i fills buffer (i + id) % n with its id, ordered after
// the previous writer through the event, with a barrier in the slab between steps. At the end
// each child checks that its own buffer holds the id of the child after it.
//
//	go run ./examples/simpleipc
//
// The simulator runs in one process and shares nothing between processes: on it the sample
// prints the waiver line the C sample prints when no device supports IPC, and exits cleanly.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"unsafe"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
	"github.com/gpuactor/gpuactor/interop"
	"github.com/gpuactor/gpuactor/streams"
)

// The sample's sizes.
const (
	shmName    = "simpleIPCshm"
	maxDevices = 32
	dataSize   = 64 << 20
)

// The slab's layout, as the C sample's shmStruct: nprocesses (size_t), barrier, sense (int),
// devices[32] (int), then the memory and event handles.
const (
	offNProc   = 0
	offBarrier = 8
	offSense   = 12
	offDevices = 16
	offMem     = offDevices + 4*maxDevices
	offEvent   = offMem + interop.HandleSize*maxDevices
	shmSize    = offEvent + interop.HandleSize*maxDevices
)

// source is simpleIPC's kernel, with val an int (kernel arguments are 32 or 64 bits wide).
const source = `
extern "C" __global__ void simpleKernel(char *ptr, int sz, int val) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    for (; idx < sz; idx += (gridDim.x * blockDim.x)) {
        ptr[idx] = (char)val;
    }
}
`

var simKernels = map[string]cuda.SimKernel{
	"simpleKernel": func(c *cuda.KernelCall) error {
		n := int(c.Int32(1))
		p := cuda.SimSlice[byte](c, 0, n)
		for i := range p {
			p[i] = byte(c.Int32(2))
		}
		return nil
	},
}

// errWaived is the end of a run on a machine without IPC: no PASS, no failure.
var errWaived = errors.New("waived")

func main() {
	var f sample.Flags
	f.RegisterBackend()
	flag.Parse()
	var err error
	if flag.NArg() == 0 {
		err = parent(f)
	} else {
		id, perr := strconv.Atoi(flag.Arg(0))
		if perr != nil {
			err = perr
		} else {
			err = child(f, id)
		}
		if err != nil {
			fmt.Println("FAIL:", err)
			os.Exit(1)
		}
		return
	}
	if errors.Is(err, errWaived) {
		os.Exit(0)
	}
	sample.Finish(err)
}

// slab is the shared memory the processes talk through.
type slab []byte

func (s slab) i32(off int) *int32  { return (*int32)(unsafe.Pointer(&s[off])) }
func (s slab) nproc() *int64       { return (*int64)(unsafe.Pointer(&s[offNProc])) }
func (s slab) mem(i int) []byte    { return s[offMem+i*interop.HandleSize:][:interop.HandleSize] }
func (s slab) event(i int) []byte  { return s[offEvent+i*interop.HandleSize:][:interop.HandleSize] }
func (s slab) device(i int) *int32 { return s.i32(offDevices + 4*i) }
func shmPath(pid int) string       { return fmt.Sprintf("/dev/shm/%s%d", shmName, pid) }

func openSlab(path string, create bool) (slab, error) {
	flags := os.O_RDWR
	if create {
		flags |= os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o600)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if create {
		if err := f.Truncate(shmSize); err != nil {
			return nil, err
		}
	}
	return mapSlab(f)
}

// barrierWait is the C sample's sense barrier over the slab.
func barrierWait(s slab, n int32) {
	barrier, sense := s.i32(offBarrier), s.i32(offSense)
	if atomic.AddInt32(barrier, 1) == n {
		atomic.StoreInt32(sense, 1)
	}
	for atomic.LoadInt32(sense) == 0 {
	}
	if atomic.AddInt32(barrier, -1) == 0 {
		atomic.StoreInt32(sense, 0)
	}
	for atomic.LoadInt32(sense) != 0 {
	}
}

func parent(f sample.Flags) (err error) {
	ctx := context.Background()
	name := shmPath(os.Getpid())
	fmt.Printf("PP: lshmName = %s%d\n", shmName, os.Getpid())
	devs, err := device.OpenAll(ctx, f.Options()...)
	if err != nil {
		return err
	}
	defer sample.CloseAll(&err, devs)
	shm, err := openSlab(name, true)
	if err != nil {
		fmt.Println("Failed to create shared memory slab")
		return err
	}
	defer os.Remove(name)
	defer unmapSlab(shm)

	var gpus []*device.Device
	for _, d := range devs {
		if d.Backend() != device.BackendSim { // the simulator shares nothing between processes
			gpus = append(gpus, d)
		}
	}
	chosen, err := choose(gpus, func(a, b *device.Device) (bool, error) { return interop.CanAccessPeer(ctx, a, b) })
	if err != nil {
		return err
	}
	for i, d := range chosen {
		*shm.device(i) = int32(d.Ordinal())
	}
	*shm.nproc() = int64(len(chosen))
	if len(chosen) == 0 {
		fmt.Println("No CUDA devices support IPC")
		return errWaived
	}

	bufs := make([]*device.Buffer, len(chosen))
	events := make([]*streams.Event, len(chosen))
	for i, d := range chosen {
		if bufs[i], err = d.MallocBytes(ctx, dataSize); err != nil {
			return err
		}
		h, err := interop.ExportMemory(ctx, bufs[i])
		if err != nil {
			return err
		}
		copy(shm.mem(i), h[:])
		if events[i], err = streams.NewEvent(ctx, d, streams.DisableTiming, streams.Interprocess); err != nil {
			return err
		}
		eh, err := interop.ExportEvent(ctx, events[i])
		if err != nil {
			return err
		}
		copy(shm.event(i), eh[:])
	}

	procs := make([]*exec.Cmd, len(chosen))
	for i := range chosen {
		procs[i] = exec.Command(os.Args[0], "-backend", "cuda", strconv.Itoa(i))
		procs[i].Stdout, procs[i].Stderr = os.Stdout, os.Stderr
		if err := procs[i].Start(); err != nil {
			fmt.Println("Failed to create process")
			return err
		}
	}
	for i, p := range procs {
		if err := p.Wait(); err != nil {
			fmt.Printf("Process %d failed!\n", i)
			return err
		}
	}
	for i := range chosen {
		if err := events[i].Synchronize(ctx); err != nil {
			return err
		}
		if err := events[i].Close(ctx); err != nil {
			return err
		}
		if err := bufs[i].Close(ctx); err != nil {
			return err
		}
	}
	return nil
}

// choose is the C sample's pick of the devices that take part, in ordinal order: each that
// supports unified addressing, is in the default compute mode (the parent and a child both use
// it), and can access, and be accessed by, every device picked before it (canAccess(a, b):
// whether a can access b's memory), since every child maps every other device's buffer; at
// most maxDevices. On a machine whose GPUs are not all linked (PCIe across sockets, say), a
// device left out is named, as the C sample names it. The C sample also enables peer access
// between the devices it picks, in its own process; IPC does not need it (a child's import
// enables access itself), so the port does not.
func choose(devs []*device.Device, canAccess func(a, b *device.Device) (bool, error)) ([]*device.Device, error) {
	var chosen []*device.Device
	for _, d := range devs {
		p := d.Properties()
		if !p.UnifiedAddressing {
			fmt.Printf("Device %d does not support unified addressing, skipping...\n", d.Ordinal())
			continue
		}
		if p.ComputeMode != 0 {
			fmt.Printf("Device %d is in an unsupported compute mode for this sample\n", d.Ordinal())
			continue
		}
		allPeers := true
		for _, c := range chosen {
			cd, err := canAccess(c, d)
			if err != nil {
				return nil, err
			}
			dc, err := canAccess(d, c)
			if err != nil {
				return nil, err
			}
			if !cd || !dc {
				allPeers = false
				break
			}
		}
		if !allPeers {
			fmt.Printf("Device %d is not peer capable with some other selected peers, skipping\n", d.Ordinal())
			continue
		}
		chosen = append(chosen, d)
		if len(chosen) >= maxDevices {
			break
		}
	}
	return chosen, nil
}

func child(f sample.Flags, id int) (err error) {
	ctx := context.Background()
	fmt.Printf("CP: lshmName = %s%d\n", shmName, os.Getppid())
	shm, err := openSlab(shmPath(os.Getppid()), false)
	if err != nil {
		fmt.Println("Failed to create shared memory slab")
		return err
	}
	defer unmapSlab(shm)
	n := int(*shm.nproc())
	ordinal := int(*shm.device(id))
	fmt.Printf("Process %d: Starting on device %d...\n", id, ordinal)

	dev, err := device.Open(ctx, ordinal, f.Options()...)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, dev.Close)
	s, err := streams.New(ctx, dev)
	if err != nil {
		return err
	}
	mod, err := dev.Compile(ctx, device.Source{Name: "simpleIPC.cu", Code: source, Sim: simKernels})
	if err != nil {
		return err
	}
	kern, err := mod.Kernel(ctx, "simpleKernel")
	if err != nil {
		return err
	}
	const threads = 128
	blocks := dev.Properties().MultiProcessors * (2048 / threads) // the occupancy of a 128-thread block of this kernel

	ptrs := make([]*device.Buffer, n)
	events := make([]*streams.Event, n)
	for i := range n {
		var mh interop.MemHandle
		var eh interop.EventHandle
		copy(mh[:], shm.mem(i))
		copy(eh[:], shm.event(i))
		if ptrs[i], err = interop.OpenMemory(ctx, dev, mh, dataSize); err != nil {
			return err
		}
		if events[i], err = interop.OpenEvent(ctx, dev, eh); err != nil {
			return err
		}
	}
	cfg := cuda.LaunchConfig{Grid: cuda.Dim3{X: uint32(blocks), Y: 1, Z: 1}, Block: cuda.Dim3{X: threads, Y: 1, Z: 1}}
	for i := range n {
		b := (i + id) % n
		waited := s.Wait(ctx, events[b])
		launched := s.Launch(ctx, kern, cfg, ptrs[b], int32(dataSize), int32(id))
		// The C sample's barrier follows the record being pushed to the GPU; a future tells
		// when the GPU has done it, which is later but as safe: no process records the event
		// again before the others have waited on this record.
		if err := s.Record(ctx, events[b]).Wait(ctx); err != nil {
			return err
		}
		if err := errors.Join(waited.Err(), launched.Err()); err != nil {
			return err
		}
		barrierWait(shm, int32(n))
		if id == 0 {
			fmt.Printf("Step %d done\n", i)
		}
	}
	s.Wait(ctx, events[id])
	verify := make([]byte, dataSize)
	if err := streams.CopyFromDevice(ctx, s, verify, ptrs[id]).Wait(ctx); err != nil {
		return err
	}
	if err := s.Synchronize(ctx); err != nil {
		return err
	}
	fmt.Printf("Process %d: verifying...\n", id)
	want := byte((id + 1) % n)
	for j, v := range verify {
		if v != want {
			fmt.Printf("Process %d: Verification mismatch at %d: %d != %d\n", id, j, int8(v), int8(want))
		}
	}
	for i := range n {
		if err := ptrs[i].Close(ctx); err != nil {
			return err
		}
		if err := events[i].Close(ctx); err != nil {
			return err
		}
	}
	if err := s.Close(ctx); err != nil {
		return err
	}
	fmt.Printf("Process %d complete!\n", id)
	return nil
}
