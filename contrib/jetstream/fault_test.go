package jetstream_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	js "github.com/gpuactor/gpuactor/contrib/jetstream"
)

// faultJobs is how many jobs the fault test runs: GPUACTOR_JS_FAULT_JOBS, or 5,000.
func faultJobs() int {
	if n, err := strconv.Atoi(os.Getenv("GPUACTOR_JS_FAULT_JOBS")); err == nil && n > 0 {
		return n
	}
	return 5000
}

// workerProc is one worker process of the fault test, the test binary run again.
type workerProc struct {
	name, url     string
	devices       int
	slow          float64
	faultAt       int
	extra         []string // more environment: a server's, or the replicas
	mu            sync.Mutex
	cmd           *exec.Cmd
	starts, kills int
	out           lockedBuffer
}

func (p *workerProc) start(t *testing.T) {
	t.Helper()
	require.NoError(t, p.run())
}

// run starts the process; it may be called from any goroutine.
func (p *workerProc) run() error {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	fault := 0
	if p.starts == 0 {
		fault = p.faultAt // the first run of it faults; a worker started after is healthy
	}
	cmd.Env = append(os.Environ(), workerEnv+"="+p.name, urlEnv+"="+p.url, devicesEnv+"="+strconv.Itoa(p.devices),
		slowEnv+"="+strconv.FormatFloat(p.slow, 'f', -1, 64), faultAtEnv+"="+strconv.Itoa(fault))
	cmd.Env = append(cmd.Env, p.extra...)
	p.out.Reset()
	cmd.Stdout, cmd.Stderr = &p.out, &p.out
	if err := cmd.Start(); err != nil {
		return err
	}
	p.cmd = cmd
	p.starts++
	return nil
}

// kill kills the process with SIGKILL, mid-job as it may be, and starts it again.
func (p *workerProc) killAndRestart(t *testing.T) {
	p.mu.Lock()
	defer p.mu.Unlock()
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
	p.kills++
	if err := p.run(); err != nil {
		t.Errorf("restarting %s: %v", p.name, err)
	}
}

func (p *workerProc) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	_ = p.cmd.Process.Signal(os.Interrupt)
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
}

// TestFaultsLoseNoJobAndRunNoneTwiceAsTheClientSees runs an embedded server and three worker
// processes of 1, 2 and 3 simulated devices (one slow, one faulting a device mid-run), kills
// workers at random with SIGKILL while the jobs run, and checks that every job completes once,
// with its own output.
func TestFaultsLoseNoJobAndRunNoneTwiceAsTheClientSees(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	srv, err := js.StartServer(js.WithStoreDir(t.TempDir()), js.WithLoopback(0))
	require.NoError(t, err)
	defer srv.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	conn, err := js.Connect(ctx, js.WithServer(srv), js.WithAckWait(ackWaitTest), js.WithMaxAttempts(20))
	require.NoError(t, err)
	defer conn.Close()

	procs := []*workerProc{
		{name: "w1", devices: 1, slow: 3},
		{name: "w2", devices: 2, faultAt: 20},
		{name: "w3", devices: 3},
	}
	for _, p := range procs {
		p.url = srv.URL()
		p.start(t)
	}
	defer func() {
		for _, p := range procs {
			p.stop()
			if t.Failed() {
				t.Logf("worker %s:\n%s", p.name, p.out.String())
			}
		}
	}()

	c, err := js.NewClient(ctx, conn)
	require.NoError(t, err)
	defer c.Close()
	// Wait for a worker to advertise the handler: an unknown handler fails at once.
	require.Eventually(t, func() bool {
		_, err := c.Submit(ctx, js.Job{Handler: "work", Input: []byte("probe")}).Wait(ctx)
		return err == nil
	}, time.Minute, 50*time.Millisecond)

	n := faultJobs()
	futs := make([]*js.Future, n)
	begun := make([]time.Time, n)
	start := time.Now()
	for i := range futs {
		begun[i] = time.Now()
		futs[i] = c.Submit(ctx, js.Job{ID: fmt.Sprintf("job-%d", i), Handler: "work", Input: fmt.Appendf(nil, "input %d", i)})
	}

	// The faulting worker's device 0 faults before the first kill, and the worker goes on.
	require.Eventually(t, func() bool {
		procs[1].mu.Lock()
		defer procs[1].mu.Unlock()
		return procs[1].starts == 1 && strings.Contains(procs[1].out.String(), "faulted device 0")
	}, time.Minute, 5*time.Millisecond)

	// Kill a worker at random now, while the jobs run, and then every 300 to 800 ms until every
	// job is in: a run that finishes early still has its kill.
	var finished atomic.Bool
	killed := make(chan struct{})
	go func() {
		defer close(killed)
		for !finished.Load() {
			procs[rand.IntN(len(procs))].killAndRestart(t)
			time.Sleep(time.Duration(300+rand.IntN(500)) * time.Millisecond)
		}
	}()

	lat := make([]time.Duration, n)
	for i, f := range futs {
		out, err := f.Wait(ctx)
		require.NoError(t, err, "job %d", i)
		require.Equal(t, fmt.Sprintf("input %d", i), string(out), "job %d got another job's output", i)
		lat[i] = time.Since(begun[i])
	}
	elapsed := time.Since(start)
	finished.Store(true)
	<-killed

	assert.Zero(t, c.Pending())
	kills := 0
	for _, p := range procs {
		kills += p.kills
	}
	q, err := conn.QueueStats(ctx, "work")
	require.NoError(t, err)
	assert.Zero(t, q.Pending, "nothing left queued")
	slices.Sort(lat)
	t.Logf("%d jobs over 3 worker processes (1, 2, 3 devices), %d SIGKILLs, one device faulted: %.0f jobs/s, p50 %v, p99 %v, %d duplicate results discarded",
		n, kills, float64(n)/elapsed.Seconds(), lat[n/2], lat[n*99/100], c.Discarded())
	assert.Positive(t, kills)
}

// lockedBuffer is a process's output, read while the process writes it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *lockedBuffer) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Reset()
}
