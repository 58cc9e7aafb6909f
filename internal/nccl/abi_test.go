//go:build linux && (amd64 || arm64)

package nccl

import (
	"errors"
	"os/exec"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/clib"
)

// fakeLib builds testdata/fakenccl.c into a shared library and binds it; the test skips
// where no C compiler is installed.
func fakeLib(t *testing.T) (*Lib, uintptr) {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler to build the stand-in libnccl")
	}
	so := filepath.Join(t.TempDir(), "libnccl.so.2")
	out, err := exec.Command(cc, "-shared", "-fPIC", "-O1", "-o", so, "testdata/fakenccl.c").CombinedOutput()
	require.NoError(t, err, "%s", out)
	h, err := dlopen(so, false)
	require.NoError(t, err)
	return bind(found{handle: h, path: so}), h
}

// sym is the address of one of the stand-in's globals.
func sym[T any](t *testing.T, h uintptr, name string) *T {
	t.Helper()
	p, err := dlsym(h, name)
	require.NoError(t, err)
	return *(**T)(unsafe.Pointer(&p))
}

func TestInitRankPassesTheIDByValue(t *testing.T) {
	l, h := fakeLib(t)
	var id backend.CommID
	for i := range id {
		id[i] = byte(255 - i)
	}
	cfg := NewConfig()
	cfg.Blocking, cfg.MinCTAs, cfg.MaxCTAs = 0, 2, 8
	name := []byte("Socket\x00")
	cfg.NetName = &name[0]
	c, err := l.CommInitRank(4, id, 3, cfg)
	assert.ErrorIs(t, err, backend.ErrCollInProgress)
	assert.EqualValues(t, 0x1234, c)

	assert.Equal(t, id, *sym[backend.CommID](t, h, "gotId"), "the 128 bytes arrive intact")
	rec := sym[[16]int64](t, h, "rec")
	assert.EqualValues(t, 4, rec[0], "nranks")
	assert.EqualValues(t, 3, rec[1], "rank, after the id")
	got := sym[Config](t, h, "gotConfig")
	assert.EqualValues(t, 48, got.Size)
	assert.EqualValues(t, uint32(0xcafebeef), got.Magic)
	assert.EqualValues(t, 0, got.Blocking)
	assert.EqualValues(t, 2, got.MinCTAs)
	assert.EqualValues(t, 8, got.MaxCTAs)
	assert.EqualValues(t, Undef, got.CGAClusterSize)
	assert.Equal(t, "Socket", clib.GoString(uintptr(unsafe.Pointer(sym[byte](t, h, "gotNetName")))))

	require.NoError(t, l.CommAsyncError(c))
	var ce *backend.CollError
	require.ErrorAs(t, l.CommAsyncError(0x99), &ce)
	assert.EqualValues(t, backend.CollRemoteError, ce.Code)
}

func TestCallsPassTheirArguments(t *testing.T) {
	l, h := fakeLib(t)
	rec := sym[[16]int64](t, h, "rec")

	v, err := l.Version()
	require.NoError(t, err)
	assert.Equal(t, 22803, v)
	id, err := l.UniqueID()
	require.NoError(t, err)
	assert.EqualValues(t, 3, id[0])
	assert.EqualValues(t, byte((127*7+3)%256), id[127])

	n, err := l.CommCount(7)
	require.NoError(t, err)
	assert.Equal(t, 4, n)
	d, err := l.CommCuDevice(7)
	require.NoError(t, err)
	assert.Equal(t, 1, d)
	r, err := l.CommUserRank(7)
	require.NoError(t, err)
	assert.Equal(t, 2, r)

	cfg := NewConfig()
	cfg.SplitShare = 1
	var nc backend.Comm
	require.NoError(t, l.CommSplit(0x1234, 1, -5, &nc, cfg))
	assert.EqualValues(t, 0x5678, nc)
	assert.EqualValues(t, []int64{0x1234, 1, -5}, rec[:3])
	assert.EqualValues(t, 1, sym[Config](t, h, "gotConfig").SplitShare)
	require.NoError(t, l.CommSplit(0x1234, backend.SplitNoColor, 0, &nc, NewConfig()))
	assert.Zero(t, nc)

	// ncclReduce takes eight arguments: its comm and stream go on the stack on amd64.
	require.NoError(t, l.Op(0xc0, 0x57, backend.CollOp{Kind: backend.CollReduce, Send: 0x1000, Recv: 0x2000,
		Count: 1 << 33, Type: backend.CollFloat64, Op: backend.CollMax, Peer: 3}))
	assert.EqualValues(t, []int64{3, 0x1000, 0x2000, 1 << 33, 8, 2, 3, 0xc0, 0x57, 0}, rec[:10])
	require.NoError(t, l.Op(0xc0, 0x57, backend.CollOp{Kind: backend.CollRecv, Recv: 0x2000, Count: 9, Type: backend.CollInt8, Peer: 1}))
	assert.EqualValues(t, []int64{7, 0x2000, 9, 0, 1, 0xc0, 0x57}, rec[:7])
	require.NoError(t, l.Op(0xc0, 0x57, backend.CollOp{Kind: backend.CollAllGather, Send: 1, Recv: 2, Count: 5, Type: backend.CollUint32}))
	assert.EqualValues(t, []int64{4, 1, 2, 5, 3, 0xc0, 0x57}, rec[:7])

	for _, f := range []func(backend.Comm) error{l.CommFinalize, l.CommDestroy, l.CommAbort} {
		require.NoError(t, f(0xabc))
		assert.EqualValues(t, 0xabc, rec[0])
	}
}

func TestErrorsCarryNCCLText(t *testing.T) {
	l, _ := fakeLib(t)
	err := l.Op(1, 2, backend.CollOp{Kind: backend.CollAllReduce, Count: 0, Type: backend.CollFloat32})
	var ce *backend.CollError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, backend.CollInvalidArgument, ce.Code)
	assert.Equal(t, "ncclAllReduce", ce.Call)
	assert.Equal(t, "fake: count is zero", ce.Detail)
	assert.Equal(t, "invalid argument", l.ErrorString(4))
}

func TestLaunchGroupsSeveralOps(t *testing.T) {
	l, h := fakeLib(t)
	rec := sym[[16]int64](t, h, "rec")
	depth, calls := sym[int32](t, h, "groupDepth"), sym[int32](t, h, "groupCalls")

	one := backend.CollOp{Kind: backend.CollSend, Send: 1, Count: 1, Type: backend.CollInt32, Peer: 1}
	require.NoError(t, l.Launch(1, 2, []backend.CollOp{one}))
	assert.EqualValues(t, 0, *calls, "one op needs no group")
	assert.EqualValues(t, 0, rec[9])

	two := []backend.CollOp{one, {Kind: backend.CollRecv, Recv: 2, Count: 1, Type: backend.CollInt32, Peer: 1}}
	require.NoError(t, l.Launch(1, 2, two))
	assert.EqualValues(t, 1, *calls)
	assert.EqualValues(t, 1, rec[9], "the ops ran inside the group")
	assert.EqualValues(t, 0, *depth, "the group was ended")

	// A refused op still ends the group, and its error is the one returned.
	bad := []backend.CollOp{one, {Kind: backend.CollAllReduce, Count: 0, Type: backend.CollInt32}}
	err := l.Launch(1, 2, bad)
	var ce *backend.CollError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "ncclAllReduce", ce.Call)
	assert.EqualValues(t, 0, *depth)
	assert.False(t, errors.Is(err, backend.ErrCollInProgress))
}
