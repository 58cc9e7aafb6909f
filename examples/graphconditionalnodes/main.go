// Command graphconditionalnodes is NVIDIA's graphConditionalNodes sample (cuda-samples,
// 3_CUDA_Features) done with gpuactor: five small graphs whose conditional nodes pick, from a
// value a kernel sets on the GPU, what runs next.
//
//  1. simpleIfGraph: a kernel sets a condition when a device byte is odd; an if node runs a
//     kernel that says so. Launched with the byte 0, then 1.
//  2. simpleDoWhileGraph: a while node whose condition defaults to 1 at each launch (a
//     do-while); its body, filled by capturing a stream into it, decrements a device counter
//     from 10 and clears the condition at 0.
//  3. capturedWhileGraph: a kernel, a while node and a kernel, all inside one stream
//     capture; the body (the same kernel as the first) is captured into afterwards. Launched
//     with the counter at 0 (the body never runs), then at 10.
//  4. simpleIfElseGraph: an if node with an else body (CUDA 12.8+).
//  5. simpleSwitchGraph: a switch node of four bodies, launched with the selector 0 to 4
//     (4 runs none).
//
// The kernels print the C sample's lines with printf on the GPU; on the simulator their Go
// twins (kernels.go) print them. It ends with PASS.
//
//	go run ./examples/graphconditionalnodes
//	go run ./examples/graphconditionalnodes -backend sim
//
// Differences from the C sample, and why:
//
//   - Nodes are added with gpuactor's builder (AddKernel, AddIf, AddWhile, AddSwitch…), which
//     makes the same nodes as the C sample's cudaGraphAddNode calls; a kernel takes the
//     condition's Handle as its cudaGraphConditionalHandle argument, as in C.
//   - Work runs on a stream of the port's own (the C sample uses the legacy default stream),
//     and each launch is followed by a device synchronization, as in C, so that the GPU's
//     printf lines come out before the host's next line.
//   - Device selection: the port runs on device 0 unless -device says otherwise.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
	"github.com/gpuactor/gpuactor/graphs"
	"github.com/gpuactor/gpuactor/streams"
)

type config struct {
	sample.Flags
	opts []device.Option // more device options (tests)
}

func main() {
	var c config
	c.Register()
	flag.Parse()
	sample.Finish(run(c))
}

// env is what every sub-test uses.
type env struct {
	ctx context.Context
	dev *device.Device
	s   *streams.Stream
	k   map[string]*device.Kernel
}

var one = cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(1)}

func run(c config) (err error) {
	ctx := context.Background()
	dev, err := device.Open(ctx, c.Ordinal, append(c.Options(), c.opts...)...)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, dev.Close)
	p := dev.Properties()
	fmt.Printf("GPU Device %d: \"%s\" with compute capability %d.%d\n\n", dev.Ordinal(),
		sample.ArchName(os.Stdout, p.ComputeCapability.Major, p.ComputeCapability.Minor), p.ComputeCapability.Major, p.ComputeCapability.Minor)
	fmt.Printf("Driver version is: %d.%d\n", p.DriverVersion/1000, (p.DriverVersion%100)/10)
	if p.DriverVersion < 12030 {
		fmt.Println("Skipping execution as driver does not support Graph Conditional Nodes")
		return nil
	}
	mod, err := dev.Compile(ctx, device.Source{Name: "graphConditionalNodes.cu", Code: kernelSource, Sim: simKernels})
	if err != nil {
		return err
	}
	e := &env{ctx: ctx, dev: dev, k: map[string]*device.Kernel{}}
	for name := range simKernels {
		if e.k[name], err = mod.Kernel(ctx, name); err != nil {
			return err
		}
	}
	if e.s, err = streams.New(ctx, dev); err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return e.s.Close(ctx) })

	for _, sub := range []func() error{e.simpleIfGraph, e.simpleDoWhileGraph, e.capturedWhileGraph} {
		if err := sub(); err != nil {
			return err
		}
	}
	if p.DriverVersion < 12080 {
		fmt.Println("Skipping execution as driver does not support if/else and switch type Graph Conditional Nodes")
		return nil
	}
	if err := e.simpleIfElseGraph(); err != nil {
		return err
	}
	return e.simpleSwitchGraph()
}

// byteBuffer is the C sample's one byte of device memory.
func (e *env) byteBuffer() (*device.Buffer, error) { return e.dev.MallocBytes(e.ctx, 1) }

// launchWith sets the byte to v, launches x and waits for the device, as the C sample's
// cudaMemset, cudaGraphLaunch and cudaDeviceSynchronize do.
func (e *env) launchWith(x *graphs.Exec, b *device.Buffer, v byte) error {
	if _, err := e.s.Memset(e.ctx, b, v).Await(e.ctx); err != nil {
		return err
	}
	if _, err := x.Launch(e.ctx, e.s).Await(e.ctx); err != nil {
		return err
	}
	return e.dev.Synchronize(e.ctx)
}

// finish destroys the graph, its executable graph and the byte.
func (e *env) finish(g *graphs.Graph, x *graphs.Exec, b *device.Buffer) error {
	return errors.Join(x.Close(e.ctx), g.Close(e.ctx), b.Close(e.ctx))
}

// A -> B [ C ]
func (e *env) simpleIfGraph() error {
	b, err := e.byteBuffer()
	if err != nil {
		return err
	}
	fmt.Println("simpleIfGraph: Building graph...")
	g, err := graphs.New(e.ctx, e.dev)
	if err != nil {
		return err
	}
	cond, err := g.NewCondition(e.ctx)
	if err != nil {
		return err
	}
	a, err := g.AddKernel(e.ctx, nil, e.k["ifGraphKernelA"], one, b, cond.Handle())
	if err != nil {
		return err
	}
	_, body, err := g.AddIf(e.ctx, graphs.After(a), cond)
	if err != nil {
		return err
	}
	if _, err := body.AddKernel(e.ctx, nil, e.k["ifGraphKernelC"], one); err != nil {
		return err
	}
	x, err := g.Instantiate(e.ctx)
	if err != nil {
		return err
	}
	for _, v := range []byte{0, 1} {
		fmt.Printf("Host: Launching graph with device memory set to %d\n", v)
		if err := e.launchWith(x, b, v); err != nil {
			return err
		}
	}
	if err := e.finish(g, x, b); err != nil {
		return err
	}
	fmt.Print("simpleIfGraph: Complete\n\n")
	return nil
}

// A [ B -> C -> D ], a do-while loop whose body is captured.
func (e *env) simpleDoWhileGraph() error {
	b, err := e.byteBuffer()
	if err != nil {
		return err
	}
	fmt.Println("simpleDoWhileGraph: Building graph...")
	g, err := graphs.New(e.ctx, e.dev)
	if err != nil {
		return err
	}
	cond, err := g.NewCondition(e.ctx, graphs.Default(1))
	if err != nil {
		return err
	}
	_, body, err := g.AddWhile(e.ctx, nil, cond)
	if err != nil {
		return err
	}
	capture, err := streams.New(e.ctx, e.dev)
	if err != nil {
		return err
	}
	err = graphs.CaptureInto(e.ctx, capture, body, nil, func(ctx context.Context) error {
		capture.Launch(ctx, e.k["doWhileEmptyKernel"], one)
		capture.Launch(ctx, e.k["doWhileEmptyKernel"], one)
		capture.Launch(ctx, e.k["doWhileLoopKernel"], one, b, cond.Handle())
		return nil
	}, graphs.WithMode(graphs.Global))
	if err = errors.Join(err, capture.Close(e.ctx)); err != nil {
		return err
	}
	x, err := g.Instantiate(e.ctx)
	if err != nil {
		return err
	}
	fmt.Println("Host: Launching graph with loop counter set to 10")
	if err := e.launchWith(x, b, 10); err != nil {
		return err
	}
	if err := e.finish(g, x, b); err != nil {
		return err
	}
	fmt.Print("simpleDoWhileGraph: Complete\n\n")
	return nil
}

// A -> B [ C ] -> D, all captured from a stream.
func (e *env) capturedWhileGraph() error {
	b, err := e.byteBuffer()
	if err != nil {
		return err
	}
	fmt.Println("capturedWhileGraph: Building graph...")
	capture, err := streams.New(e.ctx, e.dev)
	if err != nil {
		return err
	}
	cp, err := graphs.BeginCapture(e.ctx, capture, graphs.WithMode(graphs.Global))
	if err != nil {
		return err
	}
	cond, err := cp.NewCondition(e.ctx)
	if err != nil {
		return errors.Join(err, cp.Abort(e.ctx))
	}
	capture.Launch(e.ctx, e.k["capturedWhileKernel"], one, b, cond.Handle())
	_, body, err := cp.AddWhile(e.ctx, cond)
	if err != nil {
		return errors.Join(err, cp.Abort(e.ctx))
	}
	capture.Launch(e.ctx, e.k["capturedWhileEmptyKernel"], one)
	g, err := cp.End(e.ctx)
	if err != nil {
		return err
	}
	err = graphs.CaptureInto(e.ctx, capture, body, nil, func(ctx context.Context) error {
		capture.Launch(ctx, e.k["capturedWhileKernel"], one, b, cond.Handle())
		return nil
	}, graphs.WithMode(graphs.Global))
	if err = errors.Join(err, capture.Close(e.ctx)); err != nil {
		return err
	}
	x, err := g.Instantiate(e.ctx)
	if err != nil {
		return err
	}
	fmt.Println("Host: Launching graph with loop counter set to 0")
	if err := e.launchWith(x, b, 0); err != nil {
		return err
	}
	fmt.Println("Host: Launching graph with loop counter set to 10")
	if err := e.launchWith(x, b, 10); err != nil {
		return err
	}
	if err := e.finish(g, x, b); err != nil {
		return err
	}
	fmt.Print("capturedWhileGraph: Complete\n\n")
	return nil
}

// A -> B [ C | D ]
func (e *env) simpleIfElseGraph() error {
	b, err := e.byteBuffer()
	if err != nil {
		return err
	}
	fmt.Println("simpleIfElseGraph: Building graph...")
	g, err := graphs.New(e.ctx, e.dev)
	if err != nil {
		return err
	}
	cond, err := g.NewCondition(e.ctx)
	if err != nil {
		return err
	}
	a, err := g.AddKernel(e.ctx, nil, e.k["ifGraphKernelA"], one, b, cond.Handle())
	if err != nil {
		return err
	}
	_, then, els, err := g.AddIfElse(e.ctx, graphs.After(a), cond)
	if err != nil {
		return err
	}
	if _, err := then.AddKernel(e.ctx, nil, e.k["ifGraphKernelC"], one); err != nil {
		return err
	}
	if _, err := els.AddKernel(e.ctx, nil, e.k["ifGraphKernelD"], one); err != nil {
		return err
	}
	x, err := g.Instantiate(e.ctx)
	if err != nil {
		return err
	}
	for _, v := range []byte{0, 1} {
		fmt.Printf("Host: Launching graph with device memory set to %d\n", v)
		if err := e.launchWith(x, b, v); err != nil {
			return err
		}
	}
	if err := e.finish(g, x, b); err != nil {
		return err
	}
	fmt.Print("simpleIfElseGraph: Complete\n\n")
	return nil
}

// A -> B [ C | D | E | F ]
func (e *env) simpleSwitchGraph() error {
	b, err := e.byteBuffer()
	if err != nil {
		return err
	}
	fmt.Println("simpleSwitchGraph: Building graph...")
	g, err := graphs.New(e.ctx, e.dev)
	if err != nil {
		return err
	}
	cond, err := g.NewCondition(e.ctx)
	if err != nil {
		return err
	}
	a, err := g.AddKernel(e.ctx, nil, e.k["switchGraphKernelA"], one, b, cond.Handle())
	if err != nil {
		return err
	}
	_, bodies, err := g.AddSwitch(e.ctx, graphs.After(a), cond, 4)
	if err != nil {
		return err
	}
	for i, name := range []string{"switchGraphKernelC", "switchGraphKernelD", "switchGraphKernelE", "switchGraphKernelF"} {
		if _, err := bodies[i].AddKernel(e.ctx, nil, e.k[name], one); err != nil {
			return err
		}
	}
	x, err := g.Instantiate(e.ctx)
	if err != nil {
		return err
	}
	for v := range byte(5) {
		fmt.Printf("Host: Launching graph with device memory set to %d\n", v)
		if err := e.launchWith(x, b, v); err != nil {
			return err
		}
	}
	if err := e.finish(g, x, b); err != nil {
		return err
	}
	fmt.Print("simpleSwitchGraph: Complete\n\n")
	return nil
}
