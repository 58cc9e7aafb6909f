package streams_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/streams"
)

func TestStreamAttributes(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		buf := f.Buffer(t, 1<<20)
		base, err := buf.DevicePtr(f.Ctx)
		require.NoError(t, err)

		require.NoError(t, s.SetAccessPolicy(f.Ctx, streams.AccessPolicy{Window: buf.Slice(4096, 8192), HitRatio: 0.5,
			Hit: streams.AccessPersisting, Miss: streams.AccessStreaming}))
		w, err := s.AccessPolicy(f.Ctx)
		require.NoError(t, err)
		assert.Equal(t, streams.AccessPolicyWindow{Base: base + 4096, Bytes: 8192, HitRatio: 0.5,
			Hit: streams.AccessPersisting, Miss: streams.AccessStreaming}, w)

		require.NoError(t, s.SetSyncPolicy(f.Ctx, streams.SyncYield))
		p, err := s.SyncPolicy(f.Ctx)
		require.NoError(t, err)
		assert.Equal(t, streams.SyncYield, p)

		_, greatest, err := streams.PriorityRange(f.Ctx, f.Dev)
		require.NoError(t, err)
		require.NoError(t, s.SetPriority(f.Ctx, greatest))
		assert.Equal(t, greatest, s.Priority())

		other := f.Stream(t)
		require.NoError(t, other.CopyAttributesFrom(f.Ctx, s))
		assert.GreaterOrEqual(t, other.Priority(), greatest, "the runtime's, read back")
		w2, err := other.AccessPolicy(f.Ctx)
		require.NoError(t, err)
		assert.Equal(t, w, w2)
		p, err = other.SyncPolicy(f.Ctx)
		require.NoError(t, err)
		assert.Equal(t, streams.SyncYield, p)

		require.NoError(t, s.ClearAccessPolicy(f.Ctx))
		w, err = s.AccessPolicy(f.Ctx)
		require.NoError(t, err)
		assert.Zero(t, w.Bytes)

		// A kernel queued under the attributes runs and completes.
		require.NoError(t, s.Memset(f.Ctx, buf, 1).Wait(f.Ctx))
		require.NoError(t, f.Dev.ResetPersistingL2Cache(f.Ctx))

		id1, err := s.ID(f.Ctx)
		require.NoError(t, err)
		id2, err := other.ID(f.Ctx)
		require.NoError(t, err)
		assert.NotEqual(t, id1, id2)
	})
}

func TestStreamAttributesBadInput(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		buf := f.Buffer(t, 4096)
		least, greatest, err := streams.PriorityRange(f.Ctx, f.Dev)
		require.NoError(t, err)

		err = s.SetPriority(f.Ctx, greatest-1)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		assert.ErrorContains(t, err, "outside the device's range")
		assert.Equal(t, least, s.Priority(), "a refused priority leaves the stream's")

		for _, p := range []streams.AccessPolicy{
			{Window: buf, HitRatio: 1.5, Hit: streams.AccessPersisting},
			{Window: buf, HitRatio: -0.5, Hit: streams.AccessPersisting},
			{Window: buf, HitRatio: 0.5, Hit: streams.AccessPersisting, Miss: streams.AccessPersisting},
			{Window: buf, HitRatio: 0.5, Hit: 7},
			{HitRatio: 0.5},
		} {
			assert.ErrorIs(t, s.SetAccessPolicy(f.Ctx, p), device.ErrInvalidArgument, "%+v", p)
		}
		assert.ErrorIs(t, s.SetSyncPolicy(f.Ctx, 0), device.ErrInvalidArgument)
		assert.ErrorIs(t, s.CopyAttributesFrom(f.Ctx, nil), device.ErrInvalidArgument)
		assert.ErrorIs(t, s.RecordExternal(f.Ctx, nil).Wait(f.Ctx), device.ErrInvalidArgument)

		// The device stays usable.
		require.NoError(t, s.Memset(f.Ctx, buf, 2).Wait(f.Ctx))
	})
}

func TestAccessPolicyWindowTooLarge(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		big := f.Buffer(t, 256<<20)
		err := s.SetAccessPolicy(f.Ctx, streams.AccessPolicy{Window: big, HitRatio: 1, Hit: streams.AccessPersisting})
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		assert.ErrorContains(t, err, "268435456 bytes exceeds the device's maximum")
		require.NoError(t, s.Memset(f.Ctx, big, 0).Wait(f.Ctx))
	})
}

func TestRecordExternal(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		e, err := streams.NewEvent(f.Ctx, f.Dev)
		require.NoError(t, err)
		require.NoError(t, s.Memset(f.Ctx, f.Buffer(t, 64), 3).Wait(f.Ctx))
		require.NoError(t, s.RecordExternal(f.Ctx, e).Wait(f.Ctx))
		done, err := e.Query(f.Ctx)
		require.NoError(t, err)
		assert.True(t, done)
	})
}

func TestProfilerStartStop(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		require.NoError(t, f.Dev.ProfilerStart(f.Ctx))
		require.NoError(t, f.Stream(t).Memset(f.Ctx, f.Buffer(t, 64), 1).Wait(f.Ctx))
		require.NoError(t, f.Dev.ProfilerStop(f.Ctx))
	})
}
