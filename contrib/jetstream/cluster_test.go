package jetstream_test

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	js "github.com/gpuactor/gpuactor/contrib/jetstream"
)

// freePorts returns n ports free now on 127.0.0.1.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	for _, ln := range lns {
		_ = ln.Close()
	}
	return ports
}

// TestAClusterServerKilledMidRunLosesNoJob runs a three-server NATS cluster (server
// processes, the streams replicated three ways) and two worker processes, kills one server with
// SIGKILL while the jobs run and restarts it on its files: every job completes once, with its
// own output.
func TestAClusterServerKilledMidRunLosesNoJob(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three server and two worker processes")
	}
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
			dirEnv + "=" + t.TempDir(),
		}}
		p.start(t)
		servers = append(servers, p)
	}
	defer func() {
		for _, p := range servers {
			p.stop()
		}
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// The cluster elects its JetStream leader: Connect makes the streams once it has one.
	var conn *js.Conn
	require.Eventually(t, func() bool {
		cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
		defer ccancel()
		c, err := js.Connect(cctx, js.WithURL(urls...), js.WithReplicas(3), js.WithAckWait(ackWaitTest), js.WithMaxAttempts(20))
		if err != nil {
			t.Logf("connect: %v", err)
			return false
		}
		conn = c
		return true
	}, 2*time.Minute, 500*time.Millisecond)
	defer conn.Close()

	workers := []*workerProc{{name: "w1", devices: 2}, {name: "w2", devices: 3}}
	for _, p := range workers {
		p.url = strings.Join(urls, ",")
		p.extra = []string{replicasEnv + "=3"}
		p.start(t)
	}
	defer func() {
		for _, p := range workers {
			p.stop()
			if t.Failed() {
				t.Logf("worker %s:\n%s", p.name, p.out.String())
			}
		}
	}()
	c, err := js.NewClient(ctx, conn)
	require.NoError(t, err)
	defer c.Close()
	require.Eventually(t, func() bool {
		pctx, pcancel := context.WithTimeout(ctx, 5*time.Second)
		defer pcancel()
		_, err := c.Submit(pctx, js.Job{Handler: "work", Input: []byte("probe")}).Wait(pctx)
		if err != nil {
			t.Logf("probe: %v", err)
		}
		return err == nil
	}, time.Minute, 50*time.Millisecond)

	n := faultJobs() / 5
	futs := make([]*js.Future, n)
	begun := make([]time.Time, n)
	start := time.Now()
	killed := make(chan struct{})
	go func() {
		defer close(killed)
		time.Sleep(300 * time.Millisecond)
		servers[1].killAndRestart(t) // on its files: it catches up with the other two
	}()
	for i := range futs {
		begun[i] = time.Now()
		futs[i] = c.Submit(ctx, js.Job{ID: fmt.Sprintf("job-%d", i), Handler: "work", Input: fmt.Appendf(nil, "input %d", i)})
		time.Sleep(time.Millisecond) // the submissions span the kill
	}
	lat := make([]time.Duration, n)
	for i, f := range futs {
		wctx, wcancel := context.WithTimeout(ctx, 45*time.Second)
		out, err := f.Wait(wctx)
		wcancel()
		if err != nil {
			q, qerr := conn.QueueStats(ctx, "work")
			t.Logf("job %d stalled; queue %+v (%v); futures pending %d", i, q, qerr, c.Pending())
		}
		require.NoError(t, err, "job %d", i)
		require.Equal(t, fmt.Sprintf("input %d", i), string(out), "job %d got another job's output", i)
		lat[i] = time.Since(begun[i])
	}
	elapsed := time.Since(start)
	<-killed
	assert.Zero(t, c.Pending())
	slices.Sort(lat)
	t.Logf("%d jobs through a 3-server cluster (R3), one server SIGKILLed and restarted: %.0f jobs/s, p50 %v, p99 %v, %d duplicate results discarded",
		n, float64(n)/elapsed.Seconds(), lat[n/2], lat[n*99/100], c.Discarded())
}
