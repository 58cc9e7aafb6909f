package metrics_test

import (
	"context"
	"strings"
	"testing"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/contrib/jetstream"
	"github.com/gpuactor/gpuactor/contrib/jetstream/metrics"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/group"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

func TestTheCollectorExportsTheWorkersAndTheQueuesCounts(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := jetstream.StartServer(jetstream.WithStoreDir(t.TempDir()))
	require.NoError(t, err)
	defer srv.Shutdown()
	conn, err := jetstream.Connect(ctx, jetstream.WithServer(srv))
	require.NoError(t, err)
	defer conn.Close()
	devs, err := device.OpenAll(ctx, device.WithSimulator(sim.New(sim.WithDevices(2))), device.WithKernelCache(""))
	require.NoError(t, err)
	g, err := group.New(ctx, devs)
	require.NoError(t, err)
	defer func() {
		_ = g.Close(ctx)
		for _, d := range devs {
			_ = d.Close()
		}
	}()
	w := jetstream.NewWorker(conn, g, jetstream.WithWorkerName("w1"))
	require.NoError(t, w.Handle("twice", func(ctx context.Context, d *device.Device, s *streams.Stream, in []byte) ([]byte, error) {
		return append(in, in...), nil
	}))
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- w.Serve(sctx) }()
	defer func() { stop(); require.NoError(t, <-served) }()
	<-w.Ready()
	c, err := jetstream.NewClient(ctx, conn)
	require.NoError(t, err)
	defer c.Close()
	for range 3 {
		out, err := c.Submit(ctx, jetstream.Job{Handler: "twice", Input: []byte("ab")}).Wait(ctx)
		require.NoError(t, err)
		require.Equal(t, "abab", string(out))
	}

	reg := prom.NewPedanticRegistry()
	require.NoError(t, reg.Register(metrics.NewCollector(w, conn)))
	want := `
# HELP gpuactor_jetstream_capacity Jobs the worker's group can run at once: its healthy devices' streams.
# TYPE gpuactor_jetstream_capacity gauge
gpuactor_jetstream_capacity{worker="w1"} 8
# HELP gpuactor_jetstream_jobs_done_total Jobs that ran and whose results went out.
# TYPE gpuactor_jetstream_jobs_done_total counter
gpuactor_jetstream_jobs_done_total{handler="twice",worker="w1"} 3
# HELP gpuactor_jetstream_queue_pending Jobs queued for the handler, taken by no worker yet.
# TYPE gpuactor_jetstream_queue_pending gauge
gpuactor_jetstream_queue_pending{handler="twice"} 0
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want),
		"gpuactor_jetstream_capacity", "gpuactor_jetstream_jobs_done_total", "gpuactor_jetstream_queue_pending"))
	n, err := testutil.GatherAndCount(reg)
	require.NoError(t, err)
	assert.Equal(t, 12, n, "every metric once: one worker, one handler")
}
