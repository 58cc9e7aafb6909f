package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/group"
	"github.com/gpuactor/gpuactor/isolate"
)

// The test binary is the worker of the service's isolated devices, as the program is.
func TestMain(m *testing.M) {
	isolate.Main(isolate.WithKernels(simKernels))
	// A race-detector worker would otherwise sleep a second at exit, each time.
	if _, ok := os.LookupEnv("GORACE"); !ok {
		_ = os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	os.Exit(m.Run())
}

// testConfig is a short run on two simulated isolated devices.
func testConfig(testing.TB) config {
	return config{addr: "127.0.0.1:0", sim: 2, load: true, clients: 8, size: 4096, duration: time.Second,
		cancelWithin: time.Millisecond, perDevice: 2, stagingMiB: 32, restarts: 10, grace: 20 * time.Second,
		park: true, faultAfter: 200 * time.Millisecond, log: slog.New(slog.DiscardHandler), out: io.Discard}
}

// testService opens c's devices, their group and the service over them, all closed when the
// test ends.
func testService(t testing.TB, c config) *service {
	ctx := context.Background()
	faults, prog := &faultLog{}, newProgram()
	t.Cleanup(func() { _ = prog.Close(ctx) })
	g, devs, err := openGroup(ctx, c, prog, faults)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, g.Close(ctx))
		require.NoError(t, closeAll(devs))
	})
	return newService(g, prog, faults)
}

// The service under load takes a poisoned kernel, and a kill -9 of a worker, on device 0:
// every request is answered, with every element checked; the device comes back in a new
// worker and /healthz says so, naming the fault; after shutdown every device is closed.
func TestServiceSurvivesAFault(t *testing.T) {
	for _, fault := range []string{faultPoison, faultKill} {
		t.Run(fault, func(t *testing.T) {
			c := testConfig(t)
			c.fault = fault
			checkSurvives(t, c, "sim")
		})
	}
}

// checkSurvives runs the service with c (a fault on device c.faultDevice) and checks that it
// answered every request, that the device came back and every device is healthy, and that
// shutdown closed every device.
func checkSurvives(t *testing.T, c config, backend string) {
	t.Helper()
	var out bytes.Buffer
	c.out = &out
	sum, err := run(context.Background(), c)
	t.Logf("%s", out.String())
	require.NoError(t, err, "every request answered and checked")
	assert.Positive(t, sum.load.ok)
	assert.Equal(t, c.clients, sum.load.warmups, "every client opened its connection before the clock started")
	assert.Contains(t, out.String(), "warm-up: ")
	require.GreaterOrEqual(t, len(sum.after.Devices), 1)
	assert.Equal(t, len(sum.after.Devices), sum.after.Healthy, "every device healthy after the restart")
	for i, d := range sum.after.Devices {
		assert.True(t, d.Isolated, "device %d", i)
		assert.Equal(t, backend, d.Backend, "device %d", i)
		if i != c.faultDevice {
			assert.Equal(t, uint64(0), d.Generation, "device %d was not restarted", i)
			assert.Empty(t, d.Error, "device %d", i)
			continue
		}
		assert.Equal(t, uint64(1), d.Generation, "device %d was reopened once", i)
		assert.NotEmpty(t, d.Error, "/healthz names the fault the restart recovered from")
		assert.NotNil(t, d.FailedAt)
	}
	require.Len(t, sum.final, len(sum.after.Devices))
	for i, st := range sum.final {
		assert.Equal(t, "closed", st, "device %d after shutdown: closed, not failed", i)
	}
	assert.Contains(t, out.String(), fmt.Sprintf("device %d: generation 1, closed", c.faultDevice))
}

func TestRunRefusesBadFlags(t *testing.T) {
	for _, bad := range []struct {
		set  func(*config)
		says string
	}{
		{func(c *config) { c.size = 6 }, "-size"},
		{func(c *config) { c.restarts = 0 }, "-restarts"},
		{func(c *config) { c.fault = "meteor" }, `-fault "meteor"`},
		{func(c *config) { c.backend = "cuda" }, "-sim 2 and -backend cuda"},
		{func(c *config) { c.fault, c.faultDevice = faultKill, 2 }, "-fault-device 2"},
	} {
		c := testConfig(t)
		bad.set(&c)
		_, err := run(context.Background(), c)
		require.ErrorContains(t, err, bad.says)
	}
}

// The HTTP interface: answers, bad input, /healthz and /metrics.
func TestHandler(t *testing.T) {
	ctx := context.Background()
	srv := httptest.NewServer(testService(t, testConfig(t)).handler())
	defer srv.Close()

	// One client's memory serves requests of different sizes, one after another.
	var m clientMemory
	for i, n := range []int{1000, 300, 4096} {
		dev, err := call(ctx, srv.Client(), srv.URL, n, requestID(3, i), 3, i, &m)
		require.NoError(t, err, "n = %d", n)
		assert.Contains(t, []string{"0", "1"}, dev)
	}

	// A body of unknown length (sent chunked) is read as it comes, and answered the same.
	x, y := []float32{1, 2, 3}, []float32{10, 20, 30}
	body := append(encode(nil, x), encode(nil, y)...)
	resp, err := srv.Client().Post(srv.URL+"/saxpy?a=2", "application/octet-stream", io.MultiReader(bytes.NewReader(body)))
	require.NoError(t, err)
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(got))
	assert.Equal(t, []float32{12, 24, 36}, decode(nil, got))

	for _, bad := range []struct{ query, body, says string }{
		{"a=x", "12345678", "a: "},
		{"a=1", "", "body of 0 bytes"},
		{"a=1", "123456789", "body of 9 bytes"},
	} {
		resp, err := srv.Client().Post(srv.URL+"/saxpy?"+bad.query, "application/octet-stream", strings.NewReader(bad.body))
		require.NoError(t, err)
		msg, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, bad.query)
		assert.Contains(t, string(msg), bad.says)
	}

	resp, err = srv.Client().Get(srv.URL + "/healthz")
	require.NoError(t, err)
	var h health
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&h))
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, 2, h.Healthy)
	require.Len(t, h.Devices, 2)
	var done uint64
	for i, d := range h.Devices {
		assert.Equal(t, i, d.Ordinal)
		assert.True(t, d.Healthy)
		done += d.JobsDone
	}
	assert.Equal(t, uint64(4), done, "the four requests answered")

	resp, err = srv.Client().Get(srv.URL + "/metrics")
	require.NoError(t, err)
	metrics, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Contains(t, string(metrics), `gpuactor_group_healthy{backend="sim",device="1"} 1`)
	assert.Contains(t, string(metrics), `gpuactor_device_info{backend="sim",device="0",isolated="true"} 1`)
	assert.Contains(t, string(metrics), "gpuactor_group_jobs_waiting 0")
}

// /healthz is 503 when no device takes work, and lists each device with its failure, or the
// last one a restart recovered from.
func TestHealthOf(t *testing.T) {
	faults := &faultLog{}
	faults.last = map[int]fault{1: {err: "worker killed", at: time.Unix(1, 0)}}
	st := group.Stats{Waiting: 3, Devices: []group.DeviceStats{
		{Healthy: false, Device: device.Stats{Ordinal: 0, Backend: device.BackendCUDA, Failure: "illegal address"}},
		{Healthy: false, Restarts: 2, Device: device.Stats{Ordinal: 1, Backend: device.BackendCUDA, Isolated: true}},
	}}
	h, code := healthOf(st, faults)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, 0, h.Healthy)
	assert.Equal(t, int64(3), h.Waiting)
	require.Len(t, h.Devices, 2)
	assert.Equal(t, "illegal address", h.Devices[0].Error, "the failure now comes first")
	assert.Equal(t, "worker killed", h.Devices[1].Error)
	assert.Equal(t, uint64(2), h.Devices[1].Generation)
	assert.True(t, h.Devices[1].Isolated)

	st.Devices[1].Healthy = true
	h, code = healthOf(st, faults)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, 1, h.Healthy)
}
