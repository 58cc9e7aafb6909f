package remote

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/sim"
)

func TestCodecKeepsCUDAErrors(t *testing.T) {
	c := Codec{}
	plain := &cudaerr.Error{Op: "cudaFree", Code: cudaerr.InvalidValue, Message: "invalid argument (detail)"}
	wrapped := fmt.Errorf("opening: %w", plain)
	for _, err := range []error{plain, wrapped, cudaerr.IllegalAddress, fmt.Errorf("ctx: %w", cudaerr.NotReady)} {
		code, msg := c.Encode(err)
		back := c.Decode(code, msg)
		assert.Equal(t, err.Error(), back.Error())
		want, _ := cudaerr.CodeOf(err)
		require.ErrorIs(t, back, want)
		assert.Equal(t, cudaerr.IsSticky(err), cudaerr.IsSticky(back))
		var ce *cudaerr.Error
		if errors.As(err, &ce) {
			var got *cudaerr.Error
			require.ErrorAs(t, back, &got)
			assert.Equal(t, *ce, *got)
		}
	}
	code, msg := c.Encode(errors.New("no code here"))
	back := c.Decode(code, msg)
	assert.Equal(t, "no code here", back.Error())
	_, ok := cudaerr.CodeOf(back)
	assert.False(t, ok)
}

// Every method, sent with no arguments, is refused as a short message (or served, for those
// that take none) without a panic, and the worker's device stays usable.
func TestServerSurvivesShortAndUnknownRequests(t *testing.T) {
	s := &server{be: sim.New(sim.WithDevices(1))}
	ctx := context.Background()

	_, err := s.handle(ctx, nil)
	require.Error(t, err, "an empty request")
	_, err = s.handle(ctx, request(mName).b)
	require.ErrorIs(t, err, cudaerr.InvalidDevice, "no device open yet")
	_, err = s.handle(ctx, request(mOpen).b)
	require.ErrorIs(t, err, errShort)
	e := request(mOpen)
	e.i64(0)
	_, err = s.handle(ctx, e.b)
	require.NoError(t, err)

	for m := mInfo; m < numMethods+3; m++ {
		if m == mOpen {
			continue
		}
		_, err := s.handle(ctx, request(m).b)
		if m >= numMethods {
			require.ErrorContains(t, err, "unknown method")
		}
		_ = err // a method with no arguments may succeed; none may panic
	}
	_, err = s.handle(ctx, request(mFree).b)
	require.ErrorIs(t, err, errShort)
	e = request(mGraphAddDependencies)
	e.u64(1)
	e.u64(1 << 40) // a count far past the message
	_, err = s.handle(ctx, e.b)
	require.ErrorIs(t, err, errShort)

	e = request(mMalloc)
	e.u64(4096)
	r, err := s.handle(ctx, e.b)
	require.NoError(t, err)
	d := dec{b: r}
	p := backend.DevicePtr(d.u64())
	assert.NotZero(t, p)
}

func TestRegionTableTranslatesInsideRegionsOnly(t *testing.T) {
	var tab regionTable
	a := &region{mem: make([]byte, 100), peer: 1000}
	b := &region{mem: make([]byte, 50), peer: 5000}
	tab.add(b)
	tab.add(a)
	r, off, ok := tab.find(a.base()+10, 90)
	require.True(t, ok)
	assert.Same(t, a, r)
	assert.Equal(t, uint64(10), off)
	_, _, ok = tab.find(a.base()+10, 91)
	assert.False(t, ok, "past the end")
	_, _, ok = tab.find(a.base()-1, 1)
	if a.base()-1 != b.base()+uintptr(len(b.mem))-1 {
		assert.False(t, ok, "before the start")
	}
	r, off, ok = tab.find(b.base()+uintptr(len(b.mem)), 0)
	require.True(t, ok, "an empty range at the end")
	assert.Same(t, b, r)
	assert.Equal(t, uint64(len(b.mem)), off)
	assert.Nil(t, tab.remove(a.base()+1))
	assert.Same(t, a, tab.remove(a.base()))
	_, _, ok = tab.find(a.base(), 1)
	assert.False(t, ok)
	assert.Len(t, tab.all(), 1)
}
