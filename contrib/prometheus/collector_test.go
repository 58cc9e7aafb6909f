package prometheus_test

import (
	"context"
	"strings"
	"testing"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gpuprom "github.com/gpuactor/gpuactor/contrib/prometheus"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

func openSim(t *testing.T, opts ...device.Option) *device.Device {
	t.Helper()
	ctx := context.Background()
	dev, err := device.Open(ctx, 0, append([]device.Option{device.WithSimulator(sim.New())}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = dev.Close() })
	return dev
}

func TestCollectorReportsDeviceState(t *testing.T) {
	ctx := context.Background()
	dev := openSim(t, device.WithMemoryLimit(64<<20), device.WithStagingLimit(8<<20))
	buf, err := dev.MallocBytes(ctx, 1<<20)
	require.NoError(t, err)
	s, err := streams.New(ctx, dev)
	require.NoError(t, err)
	for range 10 {
		require.NoError(t, s.Memset(ctx, buf, 1).Wait(ctx))
	}
	require.NoError(t, streams.CopyToDevice(ctx, s, buf, make([]byte, 1<<20)).Wait(ctx))

	c := gpuprom.New([]*device.Device{dev}, gpuprom.WithConstLabels(prom.Labels{"service": "test"}))
	problems, err := testutil.CollectAndLint(c)
	require.NoError(t, err)
	assert.Empty(t, problems)

	require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(`
# HELP gpuactor_up 1 while the device takes work; 0 once it failed or closed.
# TYPE gpuactor_up gauge
gpuactor_up{backend="sim",device="0",service="test"} 1
# HELP gpuactor_memory_bytes Memory gpuactor allocated and has not freed, by kind.
# TYPE gpuactor_memory_bytes gauge
gpuactor_memory_bytes{backend="sim",device="0",kind="async",service="test"} 0
gpuactor_memory_bytes{backend="sim",device="0",kind="device",service="test"} 1.048576e+06
gpuactor_memory_bytes{backend="sim",device="0",kind="imported",service="test"} 0
gpuactor_memory_bytes{backend="sim",device="0",kind="managed",service="test"} 0
gpuactor_memory_bytes{backend="sim",device="0",kind="pinned",service="test"} 4.194304e+06
gpuactor_memory_bytes{backend="sim",device="0",kind="registered",service="test"} 0
# HELP gpuactor_memory_limit_bytes The cap on device memory (WithMemoryLimit); 0 for none.
# TYPE gpuactor_memory_limit_bytes gauge
gpuactor_memory_limit_bytes{backend="sim",device="0",service="test"} 6.7108864e+07
# HELP gpuactor_staging_limit_bytes The staging pool's cap (WithStagingLimit).
# TYPE gpuactor_staging_limit_bytes gauge
gpuactor_staging_limit_bytes{backend="sim",device="0",service="test"} 8.388608e+06
# HELP gpuactor_staging_in_use_bytes Staging memory lent to copies in progress.
# TYPE gpuactor_staging_in_use_bytes gauge
gpuactor_staging_in_use_bytes{backend="sim",device="0",service="test"} 0
`), "gpuactor_up", "gpuactor_memory_bytes", "gpuactor_memory_limit_bytes", "gpuactor_staging_limit_bytes", "gpuactor_staging_in_use_bytes"))

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, s.Memset(cctx, buf, 2).Wait(ctx), context.Canceled)

	st := dev.Stats()
	assert.Positive(t, st.Cancelled, "the memset whose context had ended")
	assert.Equal(t, float64(st.Cancelled), testutil.ToFloat64(onlyMetric(c, "gpuactor_operations_cancelled_total")))
	assert.Equal(t, float64(st.Failed), testutil.ToFloat64(onlyMetric(c, "gpuactor_operations_failed_total")), "not a failure")
	assert.Equal(t, float64(st.Sent), testutil.ToFloat64(onlyMetric(c, "gpuactor_operations_sent_total")))
	assert.GreaterOrEqual(t, st.Sent, uint64(11), "ten memsets and a copy")
	assert.Equal(t, float64(st.Tracker.Completed), testutil.ToFloat64(onlyMetric(c, "gpuactor_tracker_completed_total")))
	assert.GreaterOrEqual(t, st.Tracker.Completed, uint64(11), "each waited operation's future was completed by the tracking")

	before := dev.Stats().Actor.HandOffs
	handOffs := testutil.ToFloat64(onlyMetric(c, "gpuactor_actor_handoffs_total"))
	assert.GreaterOrEqual(t, handOffs, float64(before))
	assert.LessOrEqual(t, handOffs, float64(dev.Stats().Actor.HandOffs))

	s.Close(ctx)
	require.NoError(t, dev.Close())
	assert.Equal(t, 0.0, testutil.ToFloat64(onlyMetric(c, "gpuactor_up")), "a closed device is down")
}

// onlyMetric is a collector of c's metric of that name alone (one series).
func onlyMetric(c prom.Collector, name string) prom.Collector {
	return filtered{c, name}
}

type filtered struct {
	c    prom.Collector
	name string
}

func (f filtered) Describe(ch chan<- *prom.Desc) { f.c.Describe(ch) }
func (f filtered) Collect(ch chan<- prom.Metric) {
	all := make(chan prom.Metric)
	go func() { f.c.Collect(all); close(all) }()
	for m := range all {
		if strings.Contains(m.Desc().String(), `"`+f.name+`"`) {
			ch <- m
		}
	}
}

func TestLatencyHistogramIsCumulative(t *testing.T) {
	ctx := context.Background()
	dev := openSim(t)
	s, err := streams.New(ctx, dev)
	require.NoError(t, err)
	defer s.Close(ctx)
	require.NoError(t, s.HostFunc(ctx, func() { time.Sleep(3 * time.Millisecond) }).Wait(ctx))
	for range 20 {
		require.NoError(t, s.HostFunc(ctx, func() {}).Wait(ctx))
	}
	st := dev.Stats()

	reg := prom.NewPedanticRegistry()
	require.NoError(t, reg.Register(gpuprom.New([]*device.Device{dev})))
	mfs, err := reg.Gather()
	require.NoError(t, err)
	var found bool
	for _, mf := range mfs {
		if mf.GetName() != "gpuactor_operation_latency_seconds" {
			continue
		}
		found = true
		h := mf.GetMetric()[0].GetHistogram()
		assert.Equal(t, st.Latency.Count, h.GetSampleCount())
		assert.InDelta(t, st.Latency.Sum.Seconds(), h.GetSampleSum(), 1e-9)
		var prev uint64
		var over3ms uint64
		for _, b := range h.GetBucket() {
			assert.GreaterOrEqual(t, b.GetCumulativeCount(), prev, "cumulative at %v", b.GetUpperBound())
			prev = b.GetCumulativeCount()
			if b.GetUpperBound() <= 0.002 {
				over3ms = st.Latency.Count - b.GetCumulativeCount()
			}
		}
		assert.LessOrEqual(t, prev, st.Latency.Count)
		assert.GreaterOrEqual(t, over3ms, uint64(1), "the 3 ms operation lies above the 2 ms bound")
	}
	assert.True(t, found)
}

func TestCollectorOfSeveralDevices(t *testing.T) {
	const n = 4 // past two, as a GPU host of four or eight is
	devs, err := device.OpenAll(context.Background(), device.WithSimulator(sim.New(sim.WithDevices(n))))
	require.NoError(t, err)
	for _, d := range devs {
		t.Cleanup(func() { _ = d.Close() })
	}
	c := gpuprom.New(devs)
	assert.Equal(t, n, testutil.CollectAndCount(c, "gpuactor_up"))
	assert.Equal(t, 6*n, testutil.CollectAndCount(c, "gpuactor_memory_bytes"), "six kinds per device")
}
