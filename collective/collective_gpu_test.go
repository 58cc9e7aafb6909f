package collective

import (
	"testing"

	"github.com/gpuactor/gpuactor/internal/testdev"
)

// The suite on every local GPU, one rank each (a host of one GPU runs one-rank
// communicators).

func TestGPUAllReduce(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs, ss := cudaRanks(t, ctx, 1)
	suiteAllReduce(t, ctx, devs, ss)
}

func TestGPUBroadcastReduceGatherScatter(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs, ss := cudaRanks(t, ctx, 1)
	suiteBroadcastReduceGatherScatter(t, ctx, devs, ss)
}

func TestGPUSendRecvRingAndAllToAll(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs, ss := cudaRanks(t, ctx, 1)
	suiteSendRecvRingAndAllToAll(t, ctx, devs, ss)
}

func TestGPUSplitIntoTwo(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs, ss := cudaRanks(t, ctx, 1)
	suiteSplitIntoTwo(t, ctx, devs, ss)
}

func TestGPUJoinWithoutPeersAborts(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs, ss := cudaRanks(t, ctx, 1)
	suiteJoinWithoutPeersAborts(t, ctx, devs, ss)
}
