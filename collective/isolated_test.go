package collective

import (
	"context"
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/internal/testgpu"
	"github.com/gpuactor/gpuactor/isolate"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

// The test binary is the worker of the isolated devices its tests open: isolate.Main serves
// one device and exits in a worker, and returns at once here.
func TestMain(m *testing.M) {
	isolate.Main()
	if _, ok := os.LookupEnv("GORACE"); !ok {
		_ = os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	os.Exit(m.Run())
}

// isolatedRanks opens every device opts name as an isolated device (a worker process each),
// with a stream each: a communicator over them has one rank per process, as across hosts.
func isolatedRanks(t *testing.T, ctx context.Context, opts ...device.Option) ([]*device.Device, []*streams.Stream) {
	t.Helper()
	opts = append(opts, device.Isolated(isolate.WithStderr(io.Discard)))
	devs, err := device.OpenAll(ctx, opts...)
	require.NoError(t, err)
	ss := make([]*streams.Stream, len(devs))
	for i, d := range devs {
		t.Cleanup(func() { require.NoError(t, d.Close()) })
		ss[i], err = streams.New(ctx, d)
		require.NoError(t, err)
	}
	return devs, ss
}

// Isolated simulated devices: each worker process has a simulator of its own, and their ranks
// meet at the root the process that made the ID serves.
func TestIsolatedSimCollectives(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs, ss := isolatedRanks(t, ctx, device.WithSimulator(sim.New(sim.WithDevices(3))))
	require.Len(t, devs, 3)
	t.Run("all-reduce", func(t *testing.T) { suiteAllReduce(t, ctx, devs, ss) })
	t.Run("broadcast-reduce-gather-scatter", func(t *testing.T) { suiteBroadcastReduceGatherScatter(t, ctx, devs, ss) })
	t.Run("send-recv", func(t *testing.T) { suiteSendRecvRingAndAllToAll(t, ctx, devs, ss) })
}

// Isolated GPUs: a worker process per GPU, each a rank driving libnccl in its own process.
func TestGPUIsolatedCollectives(t *testing.T) {
	ctx := testdev.Ctx(t)
	testgpu.Need(t, testdev.GPU(), "the cuda backend sees no device")
	devs, ss := isolatedRanks(t, ctx, device.WithBackend(device.BackendCUDA))
	_, err := Version(ctx, devs[0])
	testgpu.Need(t, err == nil, "libnccl does not load in the worker")
	t.Logf("%d isolated GPUs", len(devs))
	for _, m := range commModes {
		t.Run(m.name+"/all-reduce", func(t *testing.T) { suiteAllReduce(t, ctx, devs, ss, m.opts...) })
		t.Run(m.name+"/broadcast-reduce-gather-scatter", func(t *testing.T) { suiteBroadcastReduceGatherScatter(t, ctx, devs, ss, m.opts...) })
		t.Run(m.name+"/send-recv", func(t *testing.T) { suiteSendRecvRingAndAllToAll(t, ctx, devs, ss, m.opts...) })
	}
}
