package jetstream_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

func TestJobsRunAndReturnTheirOutput(t *testing.T) {
	s := start(t, 2, map[string]js.Handler{"echo": echo})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	futs := make([]*js.Future, 100)
	for i := range futs {
		futs[i] = s.client.Submit(ctx, js.Job{Handler: "echo", Input: fmt.Appendf(nil, "job %d", i)})
	}
	for i, f := range futs {
		out, err := f.Wait(ctx)
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprintf("job %d", i), string(out))
	}
	st := s.worker.Stats()
	assert.Equal(t, uint64(100), st.Handlers["echo"].Done)
	assert.Equal(t, int64(8), st.Capacity, "two devices, four streams each")
	assert.Zero(t, s.client.Pending())
	q, err := s.conn.QueueStats(ctx, "echo")
	require.NoError(t, err)
	assert.Zero(t, q.Pending)
}

func TestAJobSubmittedTwiceRunsOnce(t *testing.T) {
	var runs atomic.Int64
	s := start(t, 1, map[string]js.Handler{"count": func(ctx context.Context, d *device.Device, st *streams.Stream, in []byte) ([]byte, error) {
		runs.Add(1)
		return in, nil
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := s.client.Submit(ctx, js.Job{ID: "once", Handler: "count", Input: []byte("a")}).Wait(ctx)
	require.NoError(t, err)
	// A second client submitting the same id within the duplicate window queues nothing.
	c2, err := js.NewClient(ctx, s.conn)
	require.NoError(t, err)
	defer c2.Close()
	f := c2.Submit(ctx, js.Job{ID: "once", Handler: "count", Input: []byte("a")})
	short, cancel2 := context.WithTimeout(ctx, 1500*time.Millisecond)
	defer cancel2()
	_, err = f.Wait(short)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, int64(1), runs.Load())
}

func TestAHandlerNoWorkerHasFailsAtOnce(t *testing.T) {
	s := start(t, 1, map[string]js.Handler{"echo": echo})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := s.client.Submit(ctx, js.Job{Handler: "nosuch", Input: []byte("x")}).Wait(ctx)
	require.ErrorIs(t, err, js.ErrUnknownHandler)
	assert.Contains(t, err.Error(), `"nosuch"`)
	_, err = s.client.Submit(ctx, js.Job{Handler: "bad name!", Input: []byte("x")}).Wait(ctx)
	require.ErrorContains(t, err, "handler")
	// The worker goes on.
	out, err := s.client.Submit(ctx, js.Job{Handler: "echo", Input: []byte("x")}).Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, "x", string(out))
}

func TestAnInputOverTheLimitIsRefusedBeforeItRuns(t *testing.T) {
	var runs atomic.Int64
	s := start(t, 1, map[string]js.Handler{"count": func(ctx context.Context, d *device.Device, st *streams.Stream, in []byte) ([]byte, error) {
		runs.Add(1)
		return nil, nil
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	big := make([]byte, s.conn.MaxPayload())
	_, err := s.client.Submit(ctx, js.Job{Handler: "count", Input: big}).Wait(ctx)
	require.ErrorIs(t, err, js.ErrTooLarge)
	assert.Zero(t, runs.Load())
}

func TestAWorkerRefusesAnInputOverItsOwnLimit(t *testing.T) {
	srv, err := js.StartServer(js.WithStoreDir(t.TempDir()))
	require.NoError(t, err)
	defer srv.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := js.Connect(ctx, js.WithServer(srv))
	require.NoError(t, err)
	defer conn.Close()
	_, g := newGroup(t, 1)
	var runs atomic.Int64
	w := js.NewWorker(conn, g, js.WithInputLimit(10))
	require.NoError(t, w.Handle("count", func(ctx context.Context, d *device.Device, st *streams.Stream, in []byte) ([]byte, error) {
		runs.Add(1)
		return nil, nil
	}))
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Serve(sctx) }()
	defer func() { stop(); require.NoError(t, <-done) }()
	<-w.Ready()
	c, err := js.NewClient(ctx, conn)
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Submit(ctx, js.Job{Handler: "count", Input: make([]byte, 11)}).Wait(ctx)
	require.ErrorIs(t, err, js.ErrTooLarge)
	assert.Contains(t, err.Error(), "11 bytes")
	assert.Zero(t, runs.Load())
	assert.Equal(t, uint64(1), w.Stats().Handlers["count"].Refused)
}

func TestAFailingJobGoesToTheDeadLetterSubjectWithEveryError(t *testing.T) {
	var runs atomic.Int64
	s := start(t, 1, map[string]js.Handler{"fail": func(ctx context.Context, d *device.Device, st *streams.Stream, in []byte) ([]byte, error) {
		return nil, fmt.Errorf("boom %d", runs.Add(1))
	}}, js.WithMaxAttempts(3), js.WithQueueName("dl"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := s.client.Submit(ctx, js.Job{ID: "doomed", Handler: "fail", Input: []byte("x")}).Wait(ctx)
	require.ErrorIs(t, err, js.ErrDeadLetter)
	var je *js.JobError
	require.ErrorAs(t, err, &je)
	assert.Equal(t, "doomed", je.Job)
	assert.Contains(t, je.Msg, "boom 3")
	assert.Equal(t, int64(3), runs.Load())

	nc, err := nats.Connect("", nats.InProcessServer(s.srv.Conn()))
	require.NoError(t, err)
	defer nc.Close()
	jsc, err := jetstream.New(nc)
	require.NoError(t, err)
	dead, err := jsc.Stream(ctx, "DL_DEAD")
	require.NoError(t, err)
	m, err := dead.GetLastMsgForSubject(ctx, "dl.dead.fail")
	require.NoError(t, err)
	var dl js.DeadLetter
	require.NoError(t, json.Unmarshal(m.Data, &dl))
	assert.Equal(t, "doomed", dl.Job)
	assert.Equal(t, 3, dl.Attempts)
	require.Len(t, dl.Errors, 3)
	for i, e := range dl.Errors {
		assert.Contains(t, e, fmt.Sprintf("boom %d", i+1))
	}
	assert.Equal(t, uint64(1), s.worker.Stats().Handlers["fail"].Dead)
}

func TestAPermanentErrorFailsAtOnce(t *testing.T) {
	var runs atomic.Int64
	s := start(t, 1, map[string]js.Handler{"bad": func(ctx context.Context, d *device.Device, st *streams.Stream, in []byte) ([]byte, error) {
		runs.Add(1)
		return nil, js.Permanent(errors.New("input makes no sense"))
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := s.client.Submit(ctx, js.Job{Handler: "bad"}).Wait(ctx)
	require.ErrorContains(t, err, "input makes no sense")
	assert.NotErrorIs(t, err, js.ErrDeadLetter)
	assert.Equal(t, int64(1), runs.Load())
}

func TestACancelledJobThatHasNotStartedIsDropped(t *testing.T) {
	release := make(chan struct{})
	var runs atomic.Int64
	s := start(t, 1, map[string]js.Handler{"block": func(ctx context.Context, d *device.Device, st *streams.Stream, in []byte) ([]byte, error) {
		runs.Add(1)
		<-release
		return in, nil
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// Four streams on one device: four jobs run and block, the fifth waits in the queue.
	var running []*js.Future
	for range 4 {
		running = append(running, s.client.Submit(ctx, js.Job{Handler: "block", Input: []byte("r")}))
	}
	require.Eventually(t, func() bool { return runs.Load() == 4 }, 10*time.Second, 5*time.Millisecond)
	jctx, jcancel := context.WithCancel(ctx)
	queued := s.client.Submit(jctx, js.Job{Handler: "block", Input: []byte("q")})
	jcancel()
	_, err := queued.Wait(ctx)
	require.ErrorIs(t, err, context.Canceled)
	close(release)
	for _, f := range running {
		_, err := f.Wait(ctx)
		require.NoError(t, err)
	}
	q, err := s.conn.QueueStats(ctx, "block")
	require.NoError(t, err)
	assert.Zero(t, q.Pending, "the cancelled job left the queue")
	assert.Equal(t, int64(4), runs.Load())
}

func TestAStreamWithOtherSettingsIsNamed(t *testing.T) {
	srv, err := js.StartServer(js.WithStoreDir(t.TempDir()))
	require.NoError(t, err)
	defer srv.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, err := nats.Connect("", nats.InProcessServer(srv.Conn()))
	require.NoError(t, err)
	defer nc.Close()
	jsc, err := jetstream.New(nc)
	require.NoError(t, err)
	_, err = jsc.CreateStream(ctx, jetstream.StreamConfig{Name: "GPUACTOR_JOBS", Subjects: []string{"gpuactor.jobs.*"}, Storage: jetstream.FileStorage})
	require.NoError(t, err)
	_, err = js.Connect(ctx, js.WithServer(srv))
	require.ErrorIs(t, err, js.ErrStreamSettings)
	assert.Contains(t, err.Error(), "GPUACTOR_JOBS")
	assert.Contains(t, err.Error(), "retention")
}

func TestNoServerReachableFailsConnect(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := js.Connect(ctx, js.WithURL("nats://127.0.0.1:1"))
	require.ErrorIs(t, err, js.ErrNoServer)
	assert.Contains(t, err.Error(), "127.0.0.1:1")
}

func TestAJobRunsOnAnotherDeviceWhenItsDeviceFails(t *testing.T) {
	s := start(t, 2, map[string]js.Handler{"echo": echo})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, s.sim.Lose(0))
	for i := range 20 {
		out, err := s.client.Submit(ctx, js.Job{Handler: "echo", Input: fmt.Appendf(nil, "%d", i)}).Wait(ctx)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(fmt.Appendf(nil, "%d", i), out))
	}
	assert.Equal(t, int64(4), s.worker.Stats().Capacity, "the lost device's streams left the capacity")
}

func TestADrainingWorkerFinishesTheJobsItHolds(t *testing.T) {
	srv, err := js.StartServer(js.WithStoreDir(t.TempDir()))
	require.NoError(t, err)
	defer srv.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := js.Connect(ctx, js.WithServer(srv))
	require.NoError(t, err)
	defer conn.Close()
	_, g := newGroup(t, 1)
	release := make(chan struct{})
	var started atomic.Int64
	w := js.NewWorker(conn, g)
	require.NoError(t, w.Handle("block", func(ctx context.Context, d *device.Device, st *streams.Stream, in []byte) ([]byte, error) {
		started.Add(1)
		<-release
		return in, nil
	}))
	sctx, drain := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- w.Serve(sctx) }()
	<-w.Ready()
	c, err := js.NewClient(ctx, conn)
	require.NoError(t, err)
	defer c.Close()
	var futs []*js.Future
	for i := range 3 {
		futs = append(futs, c.Submit(ctx, js.Job{Handler: "block", Input: fmt.Appendf(nil, "%d", i)}))
	}
	require.Eventually(t, func() bool { return started.Load() == 3 }, 10*time.Second, 5*time.Millisecond)
	drain()
	select {
	case err := <-served:
		t.Fatalf("Serve returned with jobs running: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	require.NoError(t, <-served)
	for i, f := range futs {
		out, err := f.Wait(ctx)
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprint(i), string(out))
	}
	// A job submitted after the drain waits in the queue for another worker.
	q := c.Submit(ctx, js.Job{Handler: "block", Input: []byte("later")})
	short, cancel2 := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel2()
	_, err = q.Wait(short)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, int64(3), started.Load())
}

func TestInputsAndResultsOverTheThresholdTravelInTheObjectStore(t *testing.T) {
	s := start(t, 1, map[string]js.Handler{"echo": echo}, js.WithObjectStore(64<<10))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	big := make([]byte, 2*s.conn.MaxPayload()) // over what a message takes
	for i := range big {
		big[i] = byte(i * 7)
	}
	out, err := s.client.Submit(ctx, js.Job{Handler: "echo", Input: big}).Wait(ctx)
	require.NoError(t, err)
	require.True(t, bytes.Equal(big, out))
	small, err := s.client.Submit(ctx, js.Job{Handler: "echo", Input: []byte("small")}).Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, "small", string(small))

	nc, err := nats.Connect("", nats.InProcessServer(s.srv.Conn()))
	require.NoError(t, err)
	defer nc.Close()
	jsc, err := jetstream.New(nc)
	require.NoError(t, err)
	obj, err := jsc.ObjectStore(ctx, "GPUACTOR_DATA")
	require.NoError(t, err)
	_, err = obj.List(ctx)
	require.ErrorIs(t, err, jetstream.ErrNoObjectsFound, "the input and the result were deleted once used")
}
