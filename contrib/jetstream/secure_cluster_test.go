package jetstream_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	js "github.com/gpuactor/gpuactor/contrib/jetstream"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/streams"
)

// objectAbove is the size above which the secured cluster test's inputs and outputs go
// through the object store.
const objectAbove = 4096

// TestASecuredClusterServesOnlyWhomItShould runs a three-server NATS cluster (server processes)
// with mutual TLS on the client port and the routes, and two users: a worker (an nkey) that
// may serve the queue and a submitter (a password) that may only submit jobs and read its own
// results. The submitter's jobs complete once each on the worker; a connection without a
// client certificate, with a wrong password or with a TLS config that does not trust the
// servers is refused at once, and the submitter cannot serve jobs, read other results or
// delete a stream.
func TestASecuredClusterServesOnlyWhomItShould(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three server processes")
	}
	dir := t.TempDir()
	ca := newPKI(t, dir, "gpuactor test CA")
	ca.issue(t, "server", 2)
	client := ca.issue(t, "client", 3)
	kp, err := nkeys.CreateUser()
	require.NoError(t, err)
	seed, err := kp.Seed()
	require.NoError(t, err)
	pub, err := kp.PublicKey()
	require.NoError(t, err)
	seedFile := filepath.Join(dir, "worker.nk")
	require.NoError(t, os.WriteFile(seedFile, seed, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "worker.pub"), []byte(pub), 0o600))

	ports := freePorts(t, 6)
	var routes, urls []string
	for i := range 3 {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", ports[3+i]))
		urls = append(urls, fmt.Sprintf("nats://127.0.0.1:%d", ports[i]))
	}
	var servers []*workerProc
	for i := range 3 {
		p := &workerProc{name: fmt.Sprintf("s%d", i), extra: []string{
			serverEnv + "=" + fmt.Sprintf("s%d", i), portEnv + "=" + strconv.Itoa(ports[i]),
			clusterPortEnv + "=" + strconv.Itoa(ports[3+i]), routesEnv + "=" + strings.Join(routes, ","),
			dirEnv + "=" + t.TempDir(), secureEnv + "=" + dir,
		}}
		p.start(t)
		servers = append(servers, p)
	}
	defer func() {
		for _, p := range servers {
			p.stop()
			if t.Failed() {
				t.Logf("server %s:\n%s", p.name, p.out.String())
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	mtls := &tls.Config{Certificates: []tls.Certificate{client}, RootCAs: ca.pool, MinVersion: tls.VersionTLS12}
	var (
		mu         sync.Mutex
		violations []string
	)
	logViolations := nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		t.Logf("async: %v", err)
		mu.Lock()
		violations = append(violations, err.Error())
		mu.Unlock()
	})
	nkey, err := nats.NkeyOptionFromSeed(seedFile)
	require.NoError(t, err)
	workerOpts := []js.Option{js.WithURL(urls...), js.WithReplicas(3), js.WithAckWait(2 * time.Second), js.WithMaxAttempts(2),
		js.WithObjectStore(objectAbove), js.WithNATS(
			nats.Secure(mtls), nats.CustomInboxPrefix(workerInbox), logViolations, nkey)}
	submitterNATS := []nats.Option{nats.Secure(mtls), nats.CustomInboxPrefix(submitterInbox), logViolations,
		nats.UserInfo(submitterUser, submitterPassword)}
	submitterOpts := []js.Option{js.WithURL(urls...), js.WithReplicas(3), js.WithObjectStore(objectAbove), js.WithNATS(submitterNATS...)}

	// The servers take connections once they are up; the worker makes the queue once the
	// cluster has elected its JetStream leader.
	var wconn *js.Conn
	require.Eventually(t, func() bool {
		cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
		defer ccancel()
		c, err := js.Connect(cctx, workerOpts...)
		if err != nil {
			t.Logf("worker connect: %v", err)
			return false
		}
		wconn = c
		return true
	}, time.Minute, 200*time.Millisecond)
	defer wconn.Close()

	t.Run("refused", func(t *testing.T) {
		before := natsGoroutines()
		cases := []struct {
			name string
			opts []nats.Option
			why  string
		}{
			{"no client certificate", []nats.Option{nats.Secure(&tls.Config{RootCAs: ca.pool, MinVersion: tls.VersionTLS12}),
				nats.UserInfo(submitterUser, submitterPassword)}, "certificate"},
			{"wrong password", []nats.Option{nats.Secure(mtls), nats.UserInfo(submitterUser, "wrong")}, "credentials"},
			{"untrusted servers", []nats.Option{nats.Secure(&tls.Config{Certificates: []tls.Certificate{client},
				RootCAs: newPKI(t, t.TempDir(), "another CA").pool, MinVersion: tls.VersionTLS12}),
				nats.UserInfo(submitterUser, submitterPassword)}, "not trusted"},
		}
		for _, c := range cases {
			cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
			_, err := js.Connect(cctx, js.WithURL(urls...), js.WithNATS(c.opts...))
			require.ErrorIs(t, err, js.ErrRefused, c.name)
			assert.NoError(t, cctx.Err(), "%s: refused before the deadline", c.name)
			assert.Contains(t, err.Error(), c.why, c.name)
			t.Logf("%s: %v", c.name, err)
			ccancel()
		}
		assert.Eventually(t, func() bool { return natsGoroutines() <= before }, 10*time.Second, 20*time.Millisecond,
			"the refused connections left goroutines")
	})

	_, g := newGroup(t, 2)
	w := js.NewWorker(wconn, g, js.WithWorkerName("secure-w"))
	require.NoError(t, w.Handle("work", echo))
	var tried sync.Map
	require.NoError(t, w.Handle("flaky", func(ctx context.Context, d *device.Device, s *streams.Stream, in []byte) ([]byte, error) {
		if _, again := tried.LoadOrStore(string(in), true); !again {
			return nil, errors.New("first attempt fails")
		}
		return echo(ctx, d, s, in)
	}))
	require.NoError(t, w.Handle("broken", func(context.Context, *device.Device, *streams.Stream, []byte) ([]byte, error) {
		return nil, errors.New("broken on purpose")
	}))
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- w.Serve(sctx) }()
	defer func() { stop(); assert.NoError(t, <-served) }()
	select {
	case <-w.Ready():
	case err := <-served:
		require.NoError(t, err)
	}

	sconn, err := js.Connect(ctx, submitterOpts...)
	require.NoError(t, err)
	defer sconn.Close()
	c, err := js.NewClient(ctx, sconn, js.WithClientName(submitterUser))
	require.NoError(t, err)
	defer c.Close()

	const n = 200
	futs := make([]*js.Future, n)
	for i := range futs {
		futs[i] = c.Submit(ctx, js.Job{ID: fmt.Sprintf("job-%d", i), Handler: "work", Input: fmt.Appendf(nil, "input %d", i)})
	}
	for i, f := range futs {
		out, err := f.Wait(ctx)
		require.NoError(t, err, "job %d", i)
		require.Equal(t, fmt.Sprintf("input %d", i), string(out), "job %d got another job's output", i)
	}
	// A job retried after an error, one out of attempts, and one whose input and output go
	// through the object store: the worker keeps and reads errors, and dead-letters.
	big := make([]byte, 4*objectAbove)
	for i := range big {
		big[i] = byte(i * 7)
	}
	out, err := c.Submit(ctx, js.Job{Handler: "work", Input: big}).Wait(ctx)
	require.NoError(t, err)
	require.Equal(t, big, out)
	out, err = c.Submit(ctx, js.Job{Handler: "flaky", Input: []byte("flaky")}).Wait(ctx)
	require.NoError(t, err)
	require.Equal(t, "flaky", string(out))
	_, err = c.Submit(ctx, js.Job{Handler: "broken", Input: []byte("b")}).Wait(ctx)
	require.ErrorIs(t, err, js.ErrDeadLetter)
	assert.Contains(t, err.Error(), "2 attempts, 2 errors, last: broken on purpose")

	assert.Zero(t, c.Pending())
	assert.Zero(t, c.Discarded(), "no job ran twice")
	st := w.Stats().Handlers
	assert.Equal(t, uint64(n+1), st["work"].Done, "every job ran once")
	assert.Equal(t, uint64(1), st["flaky"].Retried)
	assert.Equal(t, uint64(1), st["broken"].Dead)

	// A cancelled job: the submitter may delete it from the queue.
	jctx, jcancel := context.WithCancel(ctx)
	f := c.Submit(jctx, js.Job{Handler: "work", Input: []byte("x")})
	jcancel()
	_, err = f.Wait(ctx)
	require.ErrorIs(t, err, context.Canceled)

	t.Run("submitter may not serve", func(t *testing.T) {
		sw := js.NewWorker(sconn, g, js.WithWorkerName("intruder"))
		require.NoError(t, sw.Handle("work", echo))
		err := sw.Serve(ctx)
		require.ErrorIs(t, err, js.ErrPermission)
		assert.Contains(t, err.Error(), "$JS.API.CONSUMER.CREATE.GPUACTOR_JOBS")
		t.Logf("serve: %v", err)
	})
	t.Run("a worker that may not advertise its handlers", func(t *testing.T) {
		mconn, err := js.Connect(ctx, js.WithURL(urls...), js.WithReplicas(3), js.WithNATS(nats.Secure(mtls),
			nats.CustomInboxPrefix(workerInbox), logViolations, nats.UserInfo(muteUser, mutePassword)))
		require.NoError(t, err)
		defer mconn.Close()
		mw := js.NewWorker(mconn, g, js.WithWorkerName("mute"))
		require.NoError(t, mw.Handle("work", echo))
		err = mw.Serve(ctx)
		require.ErrorIs(t, err, js.ErrPermission)
		assert.Contains(t, err.Error(), `"gpuactor.handlers.work"`)
	})
	t.Run("submitter may not read others' results", func(t *testing.T) {
		_, err := js.NewClient(ctx, sconn, js.WithClientName("someone-else"))
		require.ErrorIs(t, err, js.ErrPermission)
		assert.Contains(t, err.Error(), "gpuactor.results.someone-else")
	})
	t.Run("submitter may not delete a stream", func(t *testing.T) {
		nc, err := nats.Connect(strings.Join(urls, ","), submitterNATS...)
		require.NoError(t, err)
		defer nc.Close()
		jsc, err := jetstream.New(nc)
		require.NoError(t, err)
		dctx, dcancel := context.WithTimeout(ctx, 2*time.Second)
		defer dcancel()
		require.Error(t, jsc.DeleteStream(dctx, "GPUACTOR_JOBS"))
		_, err = jsc.Stream(ctx, "GPUACTOR_JOBS")
		require.NoError(t, err, "the job stream is still there")
	})

	// The permission sets are enough for everything else the worker and the submitter did:
	// the servers denied nothing but what the subtests tried on purpose.
	mu.Lock()
	defer mu.Unlock()
	for _, v := range violations {
		assert.Regexp(t, `Publish to "\$JS\.API\.(CONSUMER\.CREATE\.GPUACTOR_JOBS\.h_work\.|CONSUMER\.CREATE\.GPUACTOR_RESULTS\.[^.]+\.gpuactor\.results\.someone-else\.|STREAM\.DELETE\.GPUACTOR_JOBS")|Subscription to "gpuactor\.handlers\.work"`, v)
	}
}

// natsGoroutines counts the goroutines running NATS client code.
func natsGoroutines() int {
	var b strings.Builder
	_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
	n := 0
	for _, g := range strings.Split(b.String(), "\n\n") {
		if strings.Contains(g, "nats-io/nats.go") {
			n += countOf(g)
		}
	}
	return n
}

// countOf is the number of goroutines a debug=1 goroutine profile record stands for.
func countOf(record string) int {
	first, _, _ := strings.Cut(record, "\n")
	n, err := strconv.Atoi(strings.Fields(first + " 1")[0])
	if err != nil {
		return 1
	}
	return n
}
