// Command p2pbandwidthlatency is NVIDIA's p2pBandwidthLatencyTest sample (cuda-samples,
// 5_Domain_Specific) done with gpuactor: it prints which GPUs of the machine can access each
// other's memory, then, for every ordered pair of GPUs (a GPU and itself included), the
// bandwidth of copies between them one way and both ways at once, and the latency of a
// 16-byte copy as the GPU and as the CPU see it, each with peer access disabled and enabled.
// It prints what the C sample prints, in the same formats, and takes its flags:
//
//	go run ./examples/p2pbandwidthlatency                     # 40,000,000 ints a copy
//	go run ./examples/p2pbandwidthlatency --p2p_read          # P2P reads too
//	go run ./examples/p2pbandwidthlatency --sm_copy           # a kernel copies between peers
//	go run ./examples/p2pbandwidthlatency -backend sim --numElems=100000
//
// Every cell is measured as the C sample measures it: a kernel (delay) holds the stream of the
// first GPU spinning on a flag in pinned host memory, mapped into every GPU's address space,
// while a start event, the copies and a stop event are queued behind it; the host then sets
// the flag, and the figure is the GPU's time between the events. The kernel gives up after
// 10,000,000 GPU clocks, as the C sample's does, so queueing that takes longer is measured
// too; the port then says so on stderr.
//
// Where the port differs from the C sample, and why:
//
//   - Queued means issued. A gpuactor operation returns once its message is on its way to
//     the device's actor; the C sample's calls return once the runtime has queued the work.
//     Before it releases the flag, and before it stops the CPU timer of the latency matrices,
//     the port asks each stream it queued on (a stream query, which the actor answers after
//     the operations sent before it), so the same work has reached the runtime at those
//     points. The CPU latency is the time, per copy, until the copies are issued.
//   - Streams and devices. The C sample selects devices with cudaSetDevice; the port queues
//     on streams of the devices it opened, which gpuactor creates non-blocking, as the C
//     sample's are. A copy between two GPUs is streams.Stream.Copy, which issues
//     cudaMemcpyPeerAsync; on the diagonal both buffers are on one GPU, and it issues the
//     same device-to-device copy as cudaMemcpyAsync.
//   - The SM copy's launch shape. The C sample asks cudaOccupancyMaxPotentialBlockSize;
//     gpuactor does not bind the occupancy calculator, and the port computes its answer
//     from the device's properties (copyShape). With one GPU no cell uses the kernel.
//   - Errors. The C sample prints "Cuda failure <file>:<line>: '<error>'" and exits 1; the
//     port prints "FAIL: <error>" and exits 1. A non-positive --numElems is refused.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
	"github.com/gpuactor/gpuactor/sim"
)

// sampleName is the C sample's sSampleName.
const sampleName = "P2P (Peer-to-Peer) GPU Bandwidth Latency Test"

type config struct {
	help     bool // --help
	p2pRead  bool // --p2p_read
	smCopy   bool // --sm_copy
	numElems int  // --numElems
	sample.Flags
	sim  *sim.Simulator // the simulated machine to use instead of the default one (tests)
	warn io.Writer      // where warnings go (os.Stderr)
}

func main() {
	c := config{warn: os.Stderr}
	flag.BoolVar(&c.help, "help", false, "display the help menu")
	flag.BoolVar(&c.p2pRead, "p2p_read", false, "use P2P reads for data transfers between GPU pairs and show corresponding results (default: P2P writes)")
	flag.BoolVar(&c.smCopy, "sm_copy", false, "use SM initiated p2p transfers instead of the copy engines")
	flag.IntVar(&c.numElems, "numElems", 40000000, "number of integer elements to be used in p2p copy")
	c.RegisterBackend()
	flag.Parse()
	if c.help {
		printHelp(os.Stdout)
		return
	}
	if err := run(c, os.Stdout); err != nil {
		fmt.Println("FAIL:", err)
		os.Exit(1)
	}
}

// printHelp is the C sample's help screen, and a line for gpuactor's own flags.
func printHelp(w io.Writer) {
	fmt.Fprint(w, "Usage:  p2pBandwidthLatencyTest [OPTION]...\n")
	fmt.Fprint(w, "Tests bandwidth/latency of GPU pairs using P2P and without P2P\n")
	fmt.Fprint(w, "\n")
	fmt.Fprint(w, "Options:\n")
	fmt.Fprint(w, "--help\t\tDisplay this help menu\n")
	fmt.Fprint(w, "--p2p_read\tUse P2P reads for data transfers between GPU pairs and show "+
		"corresponding results.\n \t\tDefault used is P2P write operation.\n")
	fmt.Fprint(w, "--sm_copy                      Use SM intiated p2p transfers instead of Copy Engine\n")
	fmt.Fprint(w, "--numElems=<NUM_OF_INT_ELEMS>  Number of integer elements to be used in p2p copy.\n")
	fmt.Fprint(w, "--backend=<cuda|sim|auto>      gpuactor's backend (default: $GPUACTOR_BACKEND, else auto); -v logs the choice.\n")
}

func run(c config, w io.Writer) (err error) {
	if c.numElems <= 0 {
		return fmt.Errorf("--numElems=%d: the number of ints must be positive", c.numElems)
	}
	ctx := context.Background()
	opts := c.OptionsOn(c.sim)
	devs, err := device.OpenAll(ctx, opts...)
	if err != nil {
		return err
	}
	defer sample.CloseAll(&err, devs)
	if len(devs) == 0 {
		return errors.New("no CUDA-capable device is detected")
	}
	method := p2pWrite
	if c.p2pRead {
		method = p2pRead
	}

	fmt.Fprintf(w, "[%s]\n", sampleName)
	for _, d := range devs {
		p := d.Properties()
		fmt.Fprintf(w, "Device: %d, %s, pciBusID: %x, pciDeviceID: %x, pciDomainID:%x\n",
			d.Ordinal(), p.Name, p.PCIBus, p.PCIDevice, p.PCIDomain)
	}

	b := &bench{devs: devs, views: &sample.HostViews[int32]{}, smCopy: c.smCopy, warn: c.warn}
	if err := b.checkP2PAccess(ctx, w); err != nil {
		return err
	}
	if err := b.connectivityMatrix(ctx, w); err != nil {
		return err
	}

	for _, d := range devs {
		var k kernels
		if k, err = loadKernels(ctx, d, b.views); err != nil {
			return err
		}
		defer sample.Keep(&err, func() error { return k.mod.Close(ctx) })
		b.kerns = append(b.kerns, k)
	}

	steps := []struct {
		title string
		run   func() error
		on    bool
	}{
		{"Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)",
			func() error { return b.bandwidthMatrix(ctx, w, c.numElems, false, p2pWrite) }, true},
		{"Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)",
			func() error { return b.bandwidthMatrix(ctx, w, c.numElems, true, p2pWrite) }, true},
		{"Unidirectional P2P=Enabled Bandwidth (P2P Reads) Matrix (GB/s)",
			func() error { return b.bandwidthMatrix(ctx, w, c.numElems, true, method) }, method == p2pRead},
		{"Bidirectional P2P=Disabled Bandwidth Matrix (GB/s)",
			func() error { return b.bidirectionalMatrix(ctx, w, c.numElems, false) }, true},
		{"Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)",
			func() error { return b.bidirectionalMatrix(ctx, w, c.numElems, true) }, true},
		{"P2P=Disabled Latency Matrix (us)",
			func() error { return b.latencyMatrix(ctx, w, false, p2pWrite) }, true},
		{"P2P=Enabled Latency (P2P Writes) Matrix (us)",
			func() error { return b.latencyMatrix(ctx, w, true, p2pWrite) }, true},
		{"P2P=Enabled Latency (P2P Reads) Matrix (us)",
			func() error { return b.latencyMatrix(ctx, w, true, method) }, method == p2pRead},
	}
	for _, s := range steps {
		if !s.on {
			continue
		}
		fmt.Fprintln(w, s.title)
		if err := s.run(); err != nil {
			return err
		}
	}

	fmt.Fprint(w, "\nNOTE: The CUDA Samples are not meant for performance measurements. "+
		"Results may vary when GPU Boost is enabled.\n")
	return nil
}

// checkP2PAccess is the C sample's checkP2Paccess: a line for every ordered pair of distinct
// GPUs saying whether the first can access the second's memory, then a note.
func (b *bench) checkP2PAccess(ctx context.Context, w io.Writer) error {
	for i := range b.devs {
		for j := range b.devs {
			if i == j {
				continue
			}
			can, err := b.canAccess(ctx, i, j)
			if err != nil {
				return err
			}
			verdict := "CANNOT"
			if can {
				verdict = "CAN"
			}
			fmt.Fprintf(w, "Device=%d %s Access Peer Device=%d\n", i, verdict, j)
		}
	}
	fmt.Fprint(w, "\n***NOTE: In case a device doesn't have P2P access to other one, it "+
		"falls back to normal memcopy procedure.\nSo you can see lesser "+
		"Bandwidth (GB/s) and unstable Latency (us) in those cases.\n\n")
	return nil
}

// connectivityMatrix prints the P2P connectivity matrix: 1 where the row's GPU can access the
// column's memory, and on the diagonal.
func (b *bench) connectivityMatrix(ctx context.Context, w io.Writer) error {
	fmt.Fprint(w, "P2P Connectivity Matrix\n")
	fmt.Fprint(w, "     D\\D")
	for j := range b.devs {
		fmt.Fprintf(w, "%6d", j)
	}
	fmt.Fprint(w, "\n")
	for i := range b.devs {
		fmt.Fprintf(w, "%6d\t", i)
		for j := range b.devs {
			access := i == j
			if i != j {
				can, err := b.canAccess(ctx, i, j)
				if err != nil {
					return err
				}
				access = can
			}
			v := 0
			if access {
				v = 1
			}
			fmt.Fprintf(w, "%6d", v)
		}
		fmt.Fprint(w, "\n")
	}
	return nil
}
