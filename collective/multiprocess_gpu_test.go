package collective

import (
	"context"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/streams"
)

// Two processes, one GPU each: this test's process is rank 0 on GPU 0 and starts this test
// binary again as rank 1 on GPU 1 (TestGPUCollectiveChild). The ID goes through a file.
const (
	collChildEnv = "GPUACTOR_COLL_CHILD_ID" // the ID file the child reads
	collRankEnv  = "GPUACTOR_COLL_CHILD_RANK"
	collModeEnv  = "GPUACTOR_COLL_CHILD_MODE" // the child's kind of communicator (commModes)
)

func TestGPUTwoProcesses(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs, ss := cudaRanks(t, ctx, 2)
	for _, m := range commModes {
		t.Run(m.name, func(t *testing.T) { twoProcesses(t, ctx, devs, ss, m.name) })
	}
}

// twoProcesses runs rank 0 here and rank 1 in a child, both with communicators of mode.
func twoProcesses(t *testing.T, ctx context.Context, devs []*device.Device, ss []*streams.Stream, mode string) {
	id, err := NewID(ctx, devs[0])
	require.NoError(t, err)
	idFile := filepath.Join(t.TempDir(), "nccl.id")
	require.NoError(t, os.WriteFile(idFile, []byte(hex.EncodeToString(id[:])), 0o600))

	cmd := exec.Command(os.Args[0], "-test.run=^TestGPUCollectiveChild$", "-test.v")
	cmd.Env = append(os.Environ(), collChildEnv+"="+idFile, collRankEnv+"=1", collModeEnv+"="+mode)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})

	twoProcessRank(t, ctx, devs[0], ss[0], id, 0, modeOpts(mode)...)
	select {
	case err := <-done:
		done <- err
		require.NoError(t, err, "the child (rank 1) failed")
	case <-time.After(time.Minute):
		t.Fatal("the child (rank 1) did not exit")
	}
}

// TestGPUCollectiveChild is rank 1 of TestGPUTwoProcesses, in the child process.
func TestGPUCollectiveChild(t *testing.T) {
	idFile := os.Getenv(collChildEnv)
	if idFile == "" {
		t.Skip("the child process of TestGPUTwoProcesses")
	}
	rank, err := strconv.Atoi(os.Getenv(collRankEnv))
	require.NoError(t, err)
	raw, err := os.ReadFile(idFile)
	require.NoError(t, err)
	var id ID
	b, err := hex.DecodeString(string(raw))
	require.NoError(t, err)
	require.Len(t, b, len(id))
	copy(id[:], b)
	ctx := testdev.Ctx(t)
	dev, err := device.Open(ctx, rank, device.WithBackend(device.BackendCUDA))
	require.NoError(t, err)
	defer dev.Close()
	s, err := streams.New(ctx, dev)
	require.NoError(t, err)
	twoProcessRank(t, ctx, dev, s, id, rank, modeOpts(os.Getenv(collModeEnv))...)
}

// twoProcessRank is one rank's part: join, an all-reduce and a broadcast from rank 1, each
// checked against the CPU, then close.
func twoProcessRank(t *testing.T, ctx context.Context, dev *device.Device, s *streams.Stream, id ID, rank int, opts ...Option) {
	t.Helper()
	c, err := Join(ctx, dev, id, 2, rank, opts...)
	require.NoError(t, err)
	in := func(r, i int) float32 { return float32((i*3 + r*11) % 101) }
	mine := make([]float32, gpuElems)
	for i := range mine {
		mine[i] = in(rank, i)
	}
	send := upload(t, ctx, s, mine)
	recv := zeros[float32](t, ctx, s, gpuElems)
	require.NoError(t, AllReduce(ctx, s, c, send, recv, Sum).Wait(ctx))
	got := download(t, ctx, recv)
	for i := range got {
		require.Equal(t, in(0, i)+in(1, i), got[i], "rank %d all-reduce element %d", rank, i)
	}
	require.NoError(t, Broadcast(ctx, s, c, send, recv, 1).Wait(ctx))
	got = download(t, ctx, recv)
	for i := range got {
		require.Equal(t, in(1, i), got[i], "rank %d broadcast element %d", rank, i)
	}
	require.NoError(t, c.Close(ctx))
}
