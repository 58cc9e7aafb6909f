package collective

import (
	"testing"

	"github.com/gpuactor/gpuactor/internal/testdev"
)

// The suite on every local GPU, one rank each (a host of one GPU runs one-rank
// communicators), with blocking and with non-blocking communicators.

func TestGPUAllReduce(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs, ss := cudaRanks(t, ctx, 1)
	for _, m := range commModes {
		t.Run(m.name, func(t *testing.T) { suiteAllReduce(t, ctx, devs, ss, m.opts...) })
	}
}

func TestGPUBroadcastReduceGatherScatter(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs, ss := cudaRanks(t, ctx, 1)
	for _, m := range commModes {
		t.Run(m.name, func(t *testing.T) { suiteBroadcastReduceGatherScatter(t, ctx, devs, ss, m.opts...) })
	}
}

func TestGPUSendRecvRingAndAllToAll(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs, ss := cudaRanks(t, ctx, 1)
	for _, m := range commModes {
		t.Run(m.name, func(t *testing.T) { suiteSendRecvRingAndAllToAll(t, ctx, devs, ss, m.opts...) })
	}
}

func TestGPUSplitIntoTwo(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs, ss := cudaRanks(t, ctx, 1)
	for _, m := range commModes {
		t.Run(m.name, func(t *testing.T) { suiteSplitIntoTwo(t, ctx, devs, ss, m.opts...) })
	}
}

func TestGPUJoinWithoutPeersAborts(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs, ss := cudaRanks(t, ctx, 1)
	for _, m := range commModes {
		t.Run(m.name, func(t *testing.T) { suiteJoinWithoutPeersAborts(t, ctx, devs, ss, m.opts...) })
	}
}
