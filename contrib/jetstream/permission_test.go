package jetstream_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	js "github.com/gpuactor/gpuactor/contrib/jetstream"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/streams"
)

// A job message whose result subject is not a client's (here the job subject itself, which
// would feed the worker its own results) is refused: the handler never runs and nothing is
// published there.
func TestAJobWhoseResultWouldGoElsewhereIsRefused(t *testing.T) {
	var runs atomic.Int64
	s := start(t, 1, map[string]js.Handler{"echo": func(ctx context.Context, d *device.Device, st *streams.Stream, in []byte) ([]byte, error) {
		runs.Add(1)
		return in, nil
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	nc, err := nats.Connect("", nats.InProcessServer(s.srv.Conn()))
	require.NoError(t, err)
	defer nc.Close()
	jsc, err := jetstream.New(nc)
	require.NoError(t, err)
	for i, reply := range []string{"gpuactor.jobs.echo", "gpuactor.results.one-token", "other.results.a.b", "gpuactor.results.a.b.c"} {
		m := nats.NewMsg("gpuactor.jobs.echo")
		m.Data = []byte("x")
		m.Header.Set("Gpuactor-Reply", reply)
		_, err = jsc.PublishMsg(ctx, m, jetstream.WithMsgID("bad-"+string(rune('a'+i))))
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return s.worker.Stats().Handlers["echo"].Refused == 4 }, 10*time.Second, 5*time.Millisecond)
	q, err := s.conn.QueueStats(ctx, "echo")
	require.NoError(t, err)
	assert.Zero(t, q.Pending, "the refused jobs left the queue, and none was published back")
	assert.Zero(t, runs.Load())
	// The worker goes on serving real jobs.
	out, err := s.client.Submit(ctx, js.Job{Handler: "echo", Input: []byte("ok")}).Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, "ok", string(out))
}

func TestABadClientNameIsRefused(t *testing.T) {
	s := start(t, 1, map[string]js.Handler{"echo": echo})
	for _, name := range []string{"", "a.b", "a*", "a>", "a b"} {
		_, err := js.NewClient(context.Background(), s.conn, js.WithClientName(name))
		require.ErrorContains(t, err, "client name", "%q", name)
	}
}
