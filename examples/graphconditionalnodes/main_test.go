package main

import (
	"bytes"
	"io"
	"maps"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
	"github.com/gpuactor/gpuactor/graphs"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/internal/testgpu"
	"github.com/gpuactor/gpuactor/isolate"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

// The test binary is the worker of the isolated devices it opens, with the simulator kernels
// they load.
func TestMain(m *testing.M) {
	isolate.Main(isolate.WithKernels(maps.Collect(func(yield func(string, cuda.SimKernel) bool) {
		for k, v := range simKernels {
			yield(k, v)
		}
		yield("countdown", countdownSim)
	})))
	if _, ok := os.LookupEnv("GORACE"); !ok {
		_ = os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	os.Exit(m.Run())
}

// countdown decrements p[0], counts its runs in p[1], and keeps the loop's condition set
// while p[0] > 0.
const countdownSource = graphs.ConditionalDecls + `
extern "C" __global__ void countdown(int *p, cudaGraphConditionalHandle h) {
    p[0] -= 1;
    p[1] += 1;
    cudaGraphSetConditional(h, p[0] > 0 ? 1u : 0u);
}
`

func countdownSim(c *cuda.KernelCall) error {
	p := cuda.SimSlice[int32](c, 0, 2)
	p[0]--
	p[1]++
	v := uint32(0)
	if p[0] > 0 {
		v = 1
	}
	cuda.SimSetConditional(c, c.Handle(1), v)
	return nil
}

// The done-when: a while loop that runs until a kernel clears its condition gives the
// same iterations and the same memory on the simulator, the GPU, and an isolated device of
// each.
func TestWhileLoopOnEveryBackend(t *testing.T) {
	for _, b := range []struct {
		name string
		gpu  bool
		opts func(t *testing.T) []device.Option
	}{
		{"sim", false, func(t *testing.T) []device.Option { return []device.Option{device.WithSimulator(sim.New())} }},
		{"cuda", true, func(t *testing.T) []device.Option { return []device.Option{device.WithBackend(device.BackendCUDA)} }},
		{"isolated-sim", false, func(t *testing.T) []device.Option {
			return []device.Option{device.WithSimulator(sim.New()), device.Isolated(isolate.WithStderr(io.Discard))}
		}},
		{"isolated-cuda", true, func(t *testing.T) []device.Option {
			return []device.Option{device.WithBackend(device.BackendCUDA), device.Isolated(isolate.WithStderr(io.Discard))}
		}},
	} {
		t.Run(b.name, func(t *testing.T) {
			if b.gpu {
				testgpu.Need(t, testdev.GPU(), "the cuda backend sees no device")
			}
			ctx := testdev.Ctx(t)
			dev, err := device.Open(ctx, 0, append(b.opts(t), device.WithKernelCache(t.TempDir()))...)
			require.NoError(t, err)
			defer func() { require.NoError(t, dev.Close()) }()
			mod, err := dev.Compile(ctx, device.Source{Name: "countdown.cu", Code: countdownSource, Sim: map[string]cuda.SimKernel{"countdown": countdownSim}})
			require.NoError(t, err)
			k, err := mod.Kernel(ctx, "countdown")
			require.NoError(t, err)
			buf, err := dev.MallocBytes(ctx, 8)
			require.NoError(t, err)

			g, err := graphs.New(ctx, dev)
			require.NoError(t, err)
			cond, err := g.NewCondition(ctx, graphs.Default(1))
			require.NoError(t, err)
			_, body, err := g.AddWhile(ctx, nil, cond)
			require.NoError(t, err)
			_, err = body.AddKernel(ctx, nil, k, one, buf, cond.Handle())
			require.NoError(t, err)
			x, err := g.Instantiate(ctx)
			require.NoError(t, err)
			s, err := streams.New(ctx, dev)
			require.NoError(t, err)
			for _, start := range []int32{12, 1, 30} {
				testdev.Write(t, ctx, buf, []int32{start, 0})
				_, err := x.Launch(ctx, s).Await(ctx)
				require.NoError(t, err)
				out := make([]int32, 2)
				testdev.Read(t, ctx, out, buf)
				assert.Equal(t, []int32{0, start}, out, "from %d: the counter reaches 0 after %d iterations", start, start)
			}
			require.NoError(t, s.Close(ctx))
			require.NoError(t, x.Close(ctx))
			require.NoError(t, g.Close(ctx))
		})
	}
}

// TestRun runs the port on the simulator and checks every line it prints after the device's
// against the C sample's output (its lines for a GPU that runs every sub-test).
func TestRun(t *testing.T) {
	out := captureStdout(t, func() {
		require.NoError(t, run(config{Flags: sample.Flags{Backend: "sim"}}))
	})
	i := strings.Index(out, "simpleIfGraph: Building graph...")
	require.GreaterOrEqual(t, i, 0, out)
	assert.Equal(t, wantOutput(), out[i:])
}

// wantOutput is what the C sample prints from its first sub-test on.
func wantOutput() string {
	var b strings.Builder
	w := func(lines ...string) {
		for _, l := range lines {
			b.WriteString(l + "\n")
		}
	}
	w("simpleIfGraph: Building graph...",
		"Host: Launching graph with device memory set to 0", "GPU: Handle set to 0",
		"Host: Launching graph with device memory set to 1", "GPU: Handle set to 1", "GPU: Hello from the GPU! The condition was true.",
		"simpleIfGraph: Complete", "")
	w("simpleDoWhileGraph: Building graph...", "Host: Launching graph with loop counter set to 10")
	for c := 9; c >= 0; c-- {
		w("GPU: doWhileEmptyKernel()", "GPU: doWhileEmptyKernel()", "GPU: counter = "+itoa(c))
	}
	w("simpleDoWhileGraph: Complete", "")
	w("capturedWhileGraph: Building graph...", "Host: Launching graph with loop counter set to 0", "GPU: counter = 0",
		"GPU: capturedWhileEmptyKernel()", "Host: Launching graph with loop counter set to 10")
	for c := 10; c >= 1; c-- {
		w("GPU: counter = " + itoa(c))
	}
	w("GPU: capturedWhileEmptyKernel()", "capturedWhileGraph: Complete", "")
	w("simpleIfElseGraph: Building graph...",
		"Host: Launching graph with device memory set to 0", "GPU: Handle set to 0", "GPU: Hello from the GPU! The condition was false.",
		"Host: Launching graph with device memory set to 1", "GPU: Handle set to 1", "GPU: Hello from the GPU! The condition was true.",
		"simpleIfElseGraph: Complete", "")
	w("simpleSwitchGraph: Building graph...")
	for v, k := range []string{"C", "D", "E", "F", ""} {
		w("Host: Launching graph with device memory set to "+itoa(v), "GPU: Handle set to "+itoa(v))
		if k != "" {
			w("GPU: Hello from switchGraphKernel" + k + "(), running on the GPU!")
		}
	}
	w("simpleSwitchGraph: Complete", "")
	return b.String()
}

func itoa(v int) string { return strconv.Itoa(v) }

// captureStdout runs fn with os.Stdout going to a pipe and returns what it wrote.
func captureStdout(t *testing.T, fn func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	old := os.Stdout
	os.Stdout = w
	done := make(chan string)
	go func() {
		var b bytes.Buffer
		_, _ = io.Copy(&b, r)
		done <- b.String()
	}()
	defer func() { os.Stdout = old }()
	fn()
	require.NoError(t, w.Close())
	return <-done
}
