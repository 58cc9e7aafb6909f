package collective

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

// The suite on the simulator's collectives, between simulated devices of one process.

// simRanks opens testdev.SimDevices simulated devices with a stream each. It skips while
// the simulator's collectives are the stub that says they are not implemented.
func simRanks(t *testing.T, ctx context.Context) ([]*device.Device, []*streams.Stream) {
	t.Helper()
	opts := []device.Option{device.WithSimulator(sim.New(sim.WithDevices(testdev.SimDevices)))}
	devs := make([]*device.Device, testdev.SimDevices)
	ss := make([]*streams.Stream, len(devs))
	for i := range devs {
		var err error
		devs[i], err = device.Open(ctx, i, opts...)
		require.NoError(t, err)
		d := devs[i]
		t.Cleanup(func() { require.NoError(t, d.Close()) })
		ss[i], err = streams.New(ctx, d)
		require.NoError(t, err)
	}
	if _, err := Version(ctx, devs[0]); err != nil && strings.Contains(err.Error(), "not implemented yet") {
		t.Skip("the simulator's collectives are not in this build")
	}
	return devs, ss
}

func TestSimAllReduce(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs, ss := simRanks(t, ctx)
	suiteAllReduce(t, ctx, devs, ss)
}

func TestSimBroadcastReduceGatherScatter(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs, ss := simRanks(t, ctx)
	suiteBroadcastReduceGatherScatter(t, ctx, devs, ss)
}

func TestSimSendRecvRingAndAllToAll(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs, ss := simRanks(t, ctx)
	suiteSendRecvRingAndAllToAll(t, ctx, devs, ss)
}

func TestSimSplitIntoTwo(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs, ss := simRanks(t, ctx)
	suiteSplitIntoTwo(t, ctx, devs, ss)
}

func TestSimJoinWithoutPeersAborts(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs, ss := simRanks(t, ctx)
	suiteJoinWithoutPeersAborts(t, ctx, devs, ss)
}
