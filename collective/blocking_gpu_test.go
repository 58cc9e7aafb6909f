package collective

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/internal/testdev"
)

// A blocking communicator's rank sends to a peer that never receives: NCCL parks the actor
// while it connects the pair, or queues a kernel that waits on the GPU. Either way Abort
// must free the rank promptly, the future must end, and the device and NCCL on it must stay
// usable.
func TestGPUAbortFreesABlockingSendWithoutItsPeer(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs, ss := cudaRanks(t, ctx, 2)
	comms, err := NewLocal(ctx, devs[:2])
	require.NoError(t, err)

	buf := upload(t, ctx, ss[0], []float32{1, 2, 3, 4})
	f := Send(ctx, ss[0], comms[0], buf, 1) // rank 1 never posts the receive
	time.Sleep(500 * time.Millisecond)      // let NCCL reach its wait for the peer

	start := time.Now()
	require.NoError(t, comms[0].Abort(ctx))
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err = f.Wait(waitCtx)
	require.NotErrorIs(t, err, context.DeadlineExceeded, "the send did not end after Abort")
	t.Logf("send ended %v after Abort (%v); aborted from another goroutine: %d", time.Since(start), err, comms[0].aborts.Load())
	assert.ErrorIs(t, comms[0].Err(ctx), ErrAborted)
	require.NoError(t, comms[1].Abort(ctx))

	require.Equal(t, []float32{1, 2, 3, 4}, download(t, ctx, buf), "the device still copies")
	again, err := NewLocal(ctx, devs[:2])
	require.NoError(t, err, "NCCL works on the devices after the abort")
	checkAllReduce[float32](t, ctx, again, ss[:2], Sum)
	closeComms(t, ctx, again)
}
