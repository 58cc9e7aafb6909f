package prometheus_test

import (
	"context"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gpuprom "github.com/gpuactor/gpuactor/contrib/prometheus"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/group"
	"github.com/gpuactor/gpuactor/isolate"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
	"github.com/gpuactor/gpuactor/supervise"
)

// memsetJob is a job that writes a buffer on its stream and waits for it.
func memsetJob(ctx context.Context, d *device.Device, s *streams.Stream) error {
	buf, err := d.MallocBytes(ctx, 4096)
	if err != nil {
		return err
	}
	defer buf.Close(ctx)
	return s.Memset(ctx, buf, 7).Wait(ctx)
}

// restarted waits until device i of g has restarted n times and is healthy again.
func restarted(t *testing.T, g *group.Group, i int, n uint64) {
	t.Helper()
	require.Eventually(t, func() bool {
		st := g.Stats().Devices[i]
		return st.Restarts == n && st.Healthy
	}, 20*time.Second, time.Millisecond, "device %d restarted %d times", i, n)
}

// fastRestarts is a restart policy for tests: no backoff to speak of, checked often.
func fastRestarts() []supervise.Option {
	return []supervise.Option{supervise.WithBackoff(time.Millisecond), supervise.WithCheckEvery(time.Millisecond)}
}

// After a restart the collector exports the device that replaced the failed one, in its place,
// with the restart counted, and the group's job counts over both.
func TestGroupCollectorFollowsARestart(t *testing.T) {
	ctx := context.Background()
	machine := sim.New(sim.WithDevices(2), sim.WithConfinedFaults())
	devs, err := device.OpenAll(ctx, device.WithSimulator(machine))
	require.NoError(t, err)
	for _, d := range devs {
		t.Cleanup(func() { _ = d.Close() })
	}
	g, err := group.New(ctx, devs, group.WithStreams(2), group.WithPolicy(group.RoundRobin),
		group.WithRestart(func(ctx context.Context, failed *device.Device) (*device.Device, error) {
			return device.Open(ctx, failed.Ordinal(), device.WithSimulator(sim.New(sim.WithDevices(2), sim.WithConfinedFaults())))
		}, fastRestarts()...))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close(context.Background()) })
	c := gpuprom.NewGroupCollector(g, gpuprom.WithConstLabels(prom.Labels{"service": "test"}))
	problems, err := testutil.CollectAndLint(c)
	require.NoError(t, err)
	assert.Empty(t, problems)

	for range 6 {
		require.NoError(t, g.Do(ctx, memsetJob))
	}
	old := g.Devices()[1]
	require.NoError(t, machine.Fail(1, cudaerr.LaunchFailure))
	require.ErrorIs(t, old.Health(ctx), device.ErrDeviceFailed)
	restarted(t, g, 1, 1)
	now := g.Devices()[1]
	require.NotSame(t, old, now)
	for range 4 {
		require.NoError(t, g.Do(ctx, memsetJob))
	}

	st := g.Stats()
	require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(`
# HELP gpuactor_group_healthy 1 while the group places jobs on the device: it has not failed.
# TYPE gpuactor_group_healthy gauge
gpuactor_group_healthy{backend="sim",device="0",service="test"} 1
gpuactor_group_healthy{backend="sim",device="1",service="test"} 1
# HELP gpuactor_group_restarts_total Devices that replaced a failed one in this place (group.WithRestart).
# TYPE gpuactor_group_restarts_total counter
gpuactor_group_restarts_total{backend="sim",device="0",service="test"} 0
gpuactor_group_restarts_total{backend="sim",device="1",service="test"} 1
# HELP gpuactor_group_jobs_waiting Jobs placed on no device yet, waiting for the first free stream of any.
# TYPE gpuactor_group_jobs_waiting gauge
gpuactor_group_jobs_waiting{service="test"} 0
# HELP gpuactor_group_jobs_running Jobs running on the device now.
# TYPE gpuactor_group_jobs_running gauge
gpuactor_group_jobs_running{backend="sim",device="0",service="test"} 0
gpuactor_group_jobs_running{backend="sim",device="1",service="test"} 0
# HELP gpuactor_up 1 while the device takes work; 0 once it failed or closed.
# TYPE gpuactor_up gauge
gpuactor_up{backend="sim",device="0",service="test"} 1
gpuactor_up{backend="sim",device="1",service="test"} 1
`), "gpuactor_group_healthy", "gpuactor_group_restarts_total", "gpuactor_group_jobs_waiting", "gpuactor_group_jobs_running", "gpuactor_up"))

	// The job counts are the group's, over both generations; the device's own figures are the
	// new device's.
	done := seriesOf(t, c, "gpuactor_group_jobs_done_total")
	assert.Equal(t, float64(st.Devices[0].Done), done["0"])
	assert.Equal(t, float64(st.Devices[1].Done), done["1"])
	assert.Equal(t, 10.0, done["0"]+done["1"], "every job ran, on either device")
	retries := seriesOf(t, c, "gpuactor_group_job_retries_total")
	assert.Equal(t, float64(st.Devices[0].Retries), retries["0"])
	assert.Equal(t, float64(st.Devices[1].Retries), retries["1"])
	sent := seriesOf(t, c, "gpuactor_operations_sent_total")
	assert.Equal(t, float64(now.Stats().Sent), sent["1"], "device 1's figures are the new device's")

	// Once the group is closed, a scrape still answers.
	require.NoError(t, g.Close(context.Background()))
	assert.Equal(t, 2, testutil.CollectAndCount(c, "gpuactor_group_healthy"))
}

// On isolated devices the backend label is what Device.Backend says (not the worker's
// transport, "isolated-sim"), gpuactor_device_info says isolated="true", and a device whose
// worker was killed comes back under the same labels.
func TestGroupCollectorLabelsMatchTheAPI(t *testing.T) {
	ctx := context.Background()
	opts := []device.Option{device.WithBackend(device.BackendSim), device.Isolated(isolate.WithStderr(io.Discard))}
	devs, err := device.OpenAll(ctx, opts...)
	require.NoError(t, err)
	for _, d := range devs {
		t.Cleanup(func() { _ = d.Close() })
	}
	g, err := group.New(ctx, devs, group.WithStreams(1),
		group.WithRestart(func(ctx context.Context, failed *device.Device) (*device.Device, error) {
			return device.Open(ctx, failed.Ordinal(), opts...)
		}, fastRestarts()...))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close(context.Background()) })
	c := gpuprom.NewGroupCollector(g)

	// Scrapes go on while the worker dies and the device is replaced.
	stop := make(chan struct{})
	scrapes := make(chan [2]int, 1) // scrapes, and those that did not see both devices
	go func() {
		var n [2]int
		defer func() { scrapes <- n }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			n[0]++
			if testutil.CollectAndCount(c, "gpuactor_group_healthy") != 2 {
				n[1]++
			}
		}
	}()
	p, err := os.FindProcess(g.Devices()[0].WorkerPID())
	require.NoError(t, err)
	require.NoError(t, p.Kill())
	restarted(t, g, 0, 1)
	close(stop)
	n := <-scrapes
	assert.Positive(t, n[0])
	assert.Zero(t, n[1], "every scrape during the restart saw both devices")
	require.NoError(t, g.Do(ctx, memsetJob))

	reg := prom.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	mfs, err := reg.Gather()
	require.NoError(t, err)
	byOrdinal := map[string]*device.Device{}
	for _, d := range g.Devices() {
		byOrdinal[strconv.Itoa(d.Ordinal())] = d
	}
	var labelled int
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["device"] == "" {
				continue // the group's waiting count
			}
			d := byOrdinal[labels["device"]]
			require.NotNil(t, d, "%s: device %q", mf.GetName(), labels["device"])
			assert.Equal(t, string(d.Backend()), labels["backend"], mf.GetName())
			labelled++
		}
	}
	assert.Positive(t, labelled)
	require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(`
# HELP gpuactor_device_info Always 1: the device's labels, and isolated: whether it runs in a worker process of its own.
# TYPE gpuactor_device_info gauge
gpuactor_device_info{backend="sim",device="0",isolated="true"} 1
gpuactor_device_info{backend="sim",device="1",isolated="true"} 1
# HELP gpuactor_group_restarts_total Devices that replaced a failed one in this place (group.WithRestart).
# TYPE gpuactor_group_restarts_total counter
gpuactor_group_restarts_total{backend="sim",device="0"} 1
gpuactor_group_restarts_total{backend="sim",device="1"} 0
`), "gpuactor_device_info", "gpuactor_group_restarts_total"))
}

func TestGroupCollectorRefusesANilGroup(t *testing.T) {
	assert.PanicsWithValue(t, "gpuactor/contrib/prometheus: NewGroupCollector of a nil group", func() { gpuprom.NewGroupCollector(nil) })
}

// seriesOf gathers c's metric name, by device label.
func seriesOf(t *testing.T, c prom.Collector, name string) map[string]float64 {
	t.Helper()
	reg := prom.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	mfs, err := reg.Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "device" {
					v := m.GetCounter().GetValue() + m.GetGauge().GetValue()
					out[l.GetValue()] = v
				}
			}
		}
	}
	require.NotEmpty(t, out, name)
	return out
}
