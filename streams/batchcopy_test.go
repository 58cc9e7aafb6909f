package streams_test

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testfix"
	"github.com/gpuactor/gpuactor/streams"
)

func TestCopyBatchMovesEveryPiece(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		const piece, pieces = 256, 16
		const n = piece * pieces
		s := f.Stream(t)
		in, out := f.pinned(t, n), f.pinned(t, n)
		for i := range in.Host() {
			in.Host()[i] = byte(i*7 + 3)
		}
		a, b := f.Buffer(t, n), f.Buffer(t, n)
		var up, swap, down []streams.CopySpec
		for i := uint64(0); i < pieces; i++ {
			up = append(up, streams.CopyFromHost(a.Slice(i*piece, piece), in, i*piece))
			// b's pieces are a's in reverse order.
			swap = append(swap, streams.CopyDevice(b.Slice((pieces-1-i)*piece, piece), a.Slice(i*piece, piece)))
			down = append(down, streams.CopyToHost(out, i*piece, b.Slice(i*piece, piece)))
		}
		s.CopyBatch(f.Ctx, up...)
		s.CopyBatch(f.Ctx, swap...)
		testfix.Await(t, f.Ctx, s.CopyBatch(f.Ctx, down...))
		for i := 0; i < pieces; i++ {
			want := in.Host()[(pieces-1-i)*piece : (pieces-i)*piece]
			require.Equal(t, want, out.Host()[i*piece:(i+1)*piece], "piece %d", i)
		}
		testfix.Await(t, f.Ctx, s.CopyBatch(f.Ctx)) // an empty batch
	})
}

func TestCopyBatchNamesTheBadCopy(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		buf := f.Buffer(t, 64)
		other := f.Buffer(t, 64)
		host := f.pinned(t, 64)
		good := streams.CopyDevice(other, buf)
		cases := []struct {
			name string
			bad  streams.CopySpec
			want error
		}{
			{"nil destination", streams.CopyDevice(nil, buf), device.ErrInvalidArgument},
			{"empty spec", streams.CopySpec{}, device.ErrInvalidArgument},
			{"larger than its destination", streams.CopyDevice(device.Range(other, 0, 8), buf), device.ErrOutOfRange},
			{"host range past the end", streams.CopyFromHost(buf, host, 8), device.ErrOutOfRange},
			{"host offset overflows", streams.CopyToHost(host, math.MaxUint64-8, buf), device.ErrOutOfRange},
			{"nil host buffer", streams.CopyToHost(nil, 0, buf), device.ErrInvalidArgument},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				err := s.CopyBatch(f.Ctx, good, good, c.bad, good).Wait(f.Ctx)
				require.ErrorIs(t, err, c.want)
				var be *streams.BatchError
				require.True(t, errors.As(err, &be), "%v", err)
				assert.Equal(t, 2, be.Index)
				assert.Contains(t, err.Error(), "copy 2 of the batch")
				require.NoError(t, s.Synchronize(f.Ctx), "the stream stays usable")
			})
		}
		var ns *streams.Stream
		require.ErrorIs(t, ns.CopyBatch(f.Ctx, good).Wait(f.Ctx), device.ErrInvalidArgument)
	})
}
