package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
)

// TestRun serves and loads itself on the simulator, a fifth of the requests cancelled, and
// shuts down with every answer checked and nothing left behind.
func TestRun(t *testing.T) {
	c := config{addr: "127.0.0.1:0", load: true, clients: 8, size: 4096, duration: 300 * time.Millisecond,
		cancel: 0.2, cancelWithin: time.Millisecond, perDevice: 4, stagingMiB: 32, grace: 10 * time.Second,
		park: true, Flags: sample.Flags{Backend: "sim"}}
	require.NoError(t, run(context.Background(), c))
}

func TestRunRefusesBadFlags(t *testing.T) {
	c := config{clients: 1, size: 6, perDevice: 1, stagingMiB: 1, Flags: sample.Flags{Backend: "sim"}}
	require.ErrorContains(t, run(context.Background(), c), "-size")
}

func TestHandler(t *testing.T) {
	ctx := context.Background()
	devs, err := device.OpenAll(ctx, device.WithBackend(device.BackendSim))
	require.NoError(t, err)
	svc, err := newService(ctx, devs, 2)
	require.NoError(t, err)
	defer func() {
		require.NoError(t, svc.close(ctx))
		require.NoError(t, shutdownDevices(devs, 10*time.Second))
	}()
	srv := httptest.NewServer(svc.handler())
	defer srv.Close()

	// One client's memory serves requests of different sizes, one after another.
	var m clientMemory
	for i, n := range []int{1000, 300, 4096} {
		dev, err := call(ctx, srv.Client(), srv.URL, n, 3, i, &m)
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

	resp, err = srv.Client().Get(srv.URL + "/debug/vars")
	require.NoError(t, err)
	defer resp.Body.Close()
	var vars struct {
		Gpuactor []device.Stats  `json:"gpuactor"`
		Memstats json.RawMessage `json:"memstats"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&vars))
	require.Len(t, vars.Gpuactor, len(devs))
	assert.NotEmpty(t, vars.Memstats, "expvar's own variables are there too")
	var sent uint64
	for _, st := range vars.Gpuactor {
		sent += st.Sent
	}
	assert.GreaterOrEqual(t, sent, uint64(4), "the request's copies and launch")
}
