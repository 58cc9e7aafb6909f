package collective

import (
	"context"
	"encoding/hex"
	"errors"
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
	id, wait := startRankOne(t, ctx, devs[0], "TestGPUCollectiveChild", mode)
	twoProcessRank(t, ctx, devs[0], ss[0], id, 0, modeOpts(mode)...)
	require.NoError(t, wait(), "the child (rank 1)")
}

// startRankOne makes a communicator's ID on dev, writes it to a file and starts this test
// binary again as rank 1, running test (a child test that reads it with childRank) with
// communicators of mode. wait waits for the child's exit, a minute at most; the child is
// killed at the test's end whatever happened.
func startRankOne(t *testing.T, ctx context.Context, dev *device.Device, test, mode string) (ID, func() error) {
	t.Helper()
	id, err := NewID(ctx, dev)
	require.NoError(t, err)
	idFile := filepath.Join(t.TempDir(), "nccl.id")
	require.NoError(t, os.WriteFile(idFile, []byte(hex.EncodeToString(id[:])), 0o600))
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.v")
	cmd.Env = append(os.Environ(), collChildEnv+"="+idFile, collRankEnv+"=1", collModeEnv+"="+mode)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	return id, func() error {
		select {
		case err := <-done:
			done <- err
			return err
		case <-time.After(time.Minute):
			return errors.New("did not exit in a minute")
		}
	}
}

// childRank is the ID, rank and communicator options startRankOne handed to this child
// process; ok is false in a process no parent started.
func childRank(t *testing.T) (id ID, rank int, opts []Option, ok bool) {
	idFile := os.Getenv(collChildEnv)
	if idFile == "" {
		return id, 0, nil, false
	}
	rank, err := strconv.Atoi(os.Getenv(collRankEnv))
	require.NoError(t, err)
	raw, err := os.ReadFile(idFile)
	require.NoError(t, err)
	b, err := hex.DecodeString(string(raw))
	require.NoError(t, err)
	require.Len(t, b, len(id))
	copy(id[:], b)
	return id, rank, modeOpts(os.Getenv(collModeEnv)), true
}

// TestGPUCollectiveChild is rank 1 of TestGPUTwoProcesses, in the child process.
func TestGPUCollectiveChild(t *testing.T) {
	id, rank, opts, ok := childRank(t)
	if !ok {
		t.Skip("the child process of TestGPUTwoProcesses")
	}
	ctx := testdev.Ctx(t)
	dev, err := device.Open(ctx, rank, device.WithBackend(device.BackendCUDA))
	require.NoError(t, err)
	defer dev.Close()
	s, err := streams.New(ctx, dev)
	require.NoError(t, err)
	twoProcessRank(t, ctx, dev, s, id, rank, opts...)
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
