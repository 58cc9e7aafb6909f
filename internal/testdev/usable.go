package testdev

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
)

// RequireUsable fails the test unless dev still runs work: an allocation, a copy to the
// device and back whose values must survive, and a free. Tests call it after a mistake on
// purpose, to check that the device stays usable. It returns once the buffer is freed.
func RequireUsable(t testing.TB, dev *device.Device) {
	t.Helper()
	ctx := Ctx(t)
	buf, err := dev.MallocBytes(ctx, 64)
	require.NoError(t, err, "allocating on %v after the mistake", dev)
	in := []uint32{1, 2, 3, 0xdeadbeef}
	Write(t, ctx, buf, in)
	out := make([]uint32, len(in))
	Read(t, ctx, out, buf)
	require.Equal(t, in, out, "a round trip through %v", dev)
	require.NoError(t, buf.Close(ctx))
}
