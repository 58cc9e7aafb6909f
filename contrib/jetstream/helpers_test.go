package jetstream_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	js "github.com/gpuactor/gpuactor/contrib/jetstream"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/group"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

// openSims opens n simulated devices whose faults stay on their device.
func openSims(ctx context.Context, n int, opts ...sim.Option) (*sim.Simulator, []*device.Device, error) {
	s := sim.New(append([]sim.Option{sim.WithDevices(n), sim.WithConfinedFaults()}, opts...)...)
	devs, err := device.OpenAll(ctx, device.WithSimulator(s), device.WithKernelCache(""),
		device.WithActorTuning(device.ActorTuning{Spin: device.NoSpin, BusySpin: device.NoSpin, AwaitSpin: device.NoSpin}))
	return s, devs, err
}

// newGroup is a group over n simulated devices, closed with the test.
func newGroup(t *testing.T, n int) (*sim.Simulator, *group.Group) {
	t.Helper()
	s, devs, err := openSims(context.Background(), n)
	require.NoError(t, err)
	g, err := group.New(context.Background(), devs)
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = g.Close(context.Background())
		for _, d := range devs {
			_ = d.Close()
		}
	})
	return s, g
}

// echo copies its input to a device buffer and back: a job that touches the device.
func echo(ctx context.Context, d *device.Device, s *streams.Stream, in []byte) ([]byte, error) {
	if len(in) == 0 {
		return nil, nil
	}
	buf, err := d.MallocBytes(ctx, uint64(len(in)))
	if err != nil {
		return nil, err
	}
	defer buf.Close(ctx)
	host, err := d.MallocPinnedBytes(ctx, uint64(len(in)))
	if err != nil {
		return nil, err
	}
	defer host.Close(ctx)
	copy(host.Host(), in)
	if err := s.CopyHostToDevice(ctx, buf, host).Wait(ctx); err != nil {
		return nil, err
	}
	clear(host.Host())
	if err := s.CopyDeviceToHost(ctx, host, buf).Wait(ctx); err != nil {
		return nil, err
	}
	return append([]byte(nil), host.Host()...), nil
}

// setup is an embedded server in a temporary dir, a worker with handlers over a group of n
// simulated devices serving until the test ends, and a client.
type setup struct {
	srv    *js.Server
	conn   *js.Conn
	worker *js.Worker
	client *js.Client
	sim    *sim.Simulator
}

func start(t *testing.T, n int, handlers map[string]js.Handler, opts ...js.Option) *setup {
	t.Helper()
	ctx := context.Background()
	srv, err := js.StartServer(js.WithStoreDir(t.TempDir()))
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	conn, err := js.Connect(ctx, append([]js.Option{js.WithServer(srv), js.WithAckWait(2 * time.Second)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(conn.Close)
	s, g := newGroup(t, n)
	w := js.NewWorker(conn, g, js.WithWorkerName("w1"))
	for name, h := range handlers {
		require.NoError(t, w.Handle(name, h))
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- w.Serve(sctx) }()
	t.Cleanup(func() { stop(); require.NoError(t, <-served) })
	select {
	case <-w.Ready():
	case err := <-served:
		require.NoError(t, err)
	}
	c, err := js.NewClient(ctx, conn)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return &setup{srv: srv, conn: conn, worker: w, client: c, sim: s}
}
