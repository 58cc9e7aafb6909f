// Command jsbench compares GPU jobs served by JetStream worker processes, one GPU each, with
// the same jobs on one in-process group over the same GPUs, and runs them again with a worker
// killed (SIGKILL) mid-run to show that nothing is lost.
//
//	go run ./cmd/jsbench -jobs 4000 -n 16777216 -rounds 1000     # every GPU of the host
//	go run ./cmd/jsbench -sim 2 -jobs 400 -n 65536 -rounds 16    # two simulated devices
//
// It prints one line a run: group (one process, every device), jetstream (an embedded server on
// loopback in this process, which submits, and one worker process a device), and jetstream with
// -kill: worker 0 is killed after that long and not restarted. Every result is checked.
package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"syscall"
	"time"

	js "github.com/gpuactor/gpuactor/contrib/jetstream"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/group"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

type config struct {
	jobs, n, rounds, streams, sim int
	kill, ackWait                 time.Duration
	role, url                     string
	ordinal                       int
}

func main() {
	var c config
	flag.IntVar(&c.jobs, "jobs", 2000, "jobs a run")
	flag.IntVar(&c.n, "n", 1<<24, "elements (uint32) a job mixes on the device")
	flag.IntVar(&c.rounds, "rounds", 1000, "rounds of mix per element: the job's GPU time")
	flag.IntVar(&c.streams, "streams", 4, "streams per device: jobs running at once on each")
	flag.IntVar(&c.sim, "sim", 0, "simulated devices instead of the GPUs (0: the GPUs)")
	flag.DurationVar(&c.kill, "kill", 2*time.Second, "in the third run, kill worker 0 after this long (0: no third run)")
	flag.DurationVar(&c.ackWait, "ack-wait", 2*time.Second, "how long a silent worker's jobs wait before going to another")
	flag.StringVar(&c.role, "role", "", "internal: worker")
	flag.StringVar(&c.url, "url", "", "internal: the server a worker connects to")
	flag.IntVar(&c.ordinal, "device", 0, "internal: the device a worker serves")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	if c.role == "worker" {
		err = worker(ctx, c)
	} else {
		err = bench(ctx, c)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "jsbench:", err)
		os.Exit(1)
	}
}

// open opens the devices: the GPUs, or c.sim simulated ones.
func open(ctx context.Context, c config, ordinals ...int) ([]*device.Device, error) {
	var opts []device.Option
	if c.sim > 0 {
		opts = append(opts, device.WithSimulator(sim.New(sim.WithDevices(c.sim))))
	}
	if len(ordinals) == 0 {
		return device.OpenAll(ctx, opts...)
	}
	var devs []*device.Device
	for _, o := range ordinals {
		d, err := device.Open(ctx, o, opts...)
		if err != nil {
			return nil, err
		}
		devs = append(devs, d)
	}
	return devs, nil
}

// newGroup is a group over devs with the kernel loaded on each.
func newGroup(ctx context.Context, c config, devs []*device.Device, prog *device.Program) (*group.Group, error) {
	return group.New(ctx, devs, group.WithStreams(c.streams), group.WithSetup(func(ctx context.Context, d *device.Device) error {
		_, err := prog.Kernel(ctx, d, "mix")
		return err
	}))
}

// worker serves jobs on one device until SIGTERM or SIGKILL.
func worker(ctx context.Context, c config) error {
	devs, err := open(ctx, c, c.ordinal)
	if err != nil {
		return err
	}
	prog := device.NewProgram(source)
	g, err := newGroup(ctx, c, devs, prog)
	if err != nil {
		return err
	}
	defer g.Close(context.Background())
	conn, err := js.Connect(ctx, js.WithURL(c.url), js.WithAckWait(c.ackWait), js.WithQueueName("jsbench"))
	if err != nil {
		return err
	}
	defer conn.Close()
	w := js.NewWorker(conn, g, js.WithStreamsPerDevice(c.streams), js.WithWorkerName("device-"+strconv.Itoa(c.ordinal)))
	err = w.Handle("mix", func(ctx context.Context, d *device.Device, s *streams.Stream, in []byte) ([]byte, error) {
		if len(in) != 4 {
			return nil, js.Permanent(fmt.Errorf("input of %d bytes, want 4", len(in)))
		}
		return runMix(ctx, prog, d, s, binary.LittleEndian.Uint32(in), c.n, c.rounds)
	})
	if err != nil {
		return err
	}
	go func() {
		<-w.Ready()
		fmt.Println("ready") // the bench waits for this line from every worker
	}()
	return w.Serve(ctx)
}

// result is one run's figures.
type result struct {
	name     string
	jobs     int
	elapsed  time.Duration
	p50, p99 time.Duration
}

func (r result) String() string {
	return fmt.Sprintf("%-32s %6d jobs in %8.3fs: %9.1f jobs/s, p50 %v, p99 %v", r.name, r.jobs, r.elapsed.Seconds(),
		float64(r.jobs)/r.elapsed.Seconds(), r.p50.Round(time.Microsecond), r.p99.Round(time.Microsecond))
}

func figures(name string, lat []time.Duration, elapsed time.Duration) result {
	slices.Sort(lat)
	return result{name: name, jobs: len(lat), elapsed: elapsed, p50: lat[len(lat)/2], p99: lat[len(lat)*99/100]}
}

func bench(ctx context.Context, c config) error {
	devs, err := open(ctx, c)
	if err != nil {
		return err
	}
	n := len(devs)
	for _, d := range devs {
		p := d.Properties()
		fmt.Printf("device %d: %s (%s backend)\n", d.Ordinal(), p.Name, d.Backend())
	}
	fmt.Printf("%d jobs of %d elements x %d rounds, %d streams a device\n", c.jobs, c.n, c.rounds, c.streams)
	r, err := inProcess(ctx, c, devs)
	for _, d := range devs {
		_ = d.Close()
	}
	if err != nil {
		return fmt.Errorf("group: %w", err)
	}
	fmt.Println(r)
	r, err = overJetStream(ctx, c, n, 0)
	if err != nil {
		return fmt.Errorf("jetstream: %w", err)
	}
	fmt.Println(r)
	if c.kill > 0 {
		r, err = overJetStream(ctx, c, n, c.kill)
		if err != nil {
			return fmt.Errorf("jetstream, worker killed: %w", err)
		}
		fmt.Println(r)
	}
	return nil
}

// inProcess runs the jobs on one group over devs.
func inProcess(ctx context.Context, c config, devs []*device.Device) (result, error) {
	prog := device.NewProgram(source)
	defer prog.Close(context.Background())
	g, err := newGroup(ctx, c, devs, prog)
	if err != nil {
		return result{}, err
	}
	defer g.Close(context.Background())
	lat := make([]time.Duration, c.jobs)
	start := time.Now()
	for i := range c.jobs {
		begun := time.Now()
		g.Go(ctx, func(ctx context.Context, d *device.Device, s *streams.Stream) error {
			out, err := runMix(ctx, prog, d, s, uint32(i), c.n, c.rounds)
			if err == nil {
				err = check(uint32(i), c.rounds, out)
			}
			lat[i] = time.Since(begun)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return result{}, err
	}
	return figures("group, in process", lat, time.Since(start)), nil
}

// overJetStream runs the jobs on one worker process a device; with kill > 0, worker 0 is
// killed that long after the first job was submitted.
func overJetStream(ctx context.Context, c config, devices int, kill time.Duration) (result, error) {
	dir, err := os.MkdirTemp("", "jsbench")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(dir)
	srv, err := js.StartServer(js.WithStoreDir(dir), js.WithLoopback(0))
	if err != nil {
		return result{}, err
	}
	defer srv.Shutdown()
	conn, err := js.Connect(ctx, js.WithServer(srv), js.WithAckWait(c.ackWait), js.WithQueueName("jsbench"))
	if err != nil {
		return result{}, err
	}
	defer conn.Close()
	self, err := os.Executable()
	if err != nil {
		return result{}, err
	}
	var workers []*exec.Cmd
	ready := make(chan struct{}, devices)
	defer func() {
		for _, w := range workers {
			_ = w.Process.Signal(syscall.SIGTERM)
			_ = w.Wait()
		}
	}()
	for i := range devices {
		args := []string{"-role", "worker", "-url", srv.URL(), "-device", strconv.Itoa(i), "-n", strconv.Itoa(c.n),
			"-rounds", strconv.Itoa(c.rounds), "-streams", strconv.Itoa(c.streams), "-sim", strconv.Itoa(c.sim),
			"-ack-wait", c.ackWait.String()}
		cmd := exec.Command(self, args...)
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			return result{}, err
		}
		if err := cmd.Start(); err != nil {
			return result{}, err
		}
		workers = append(workers, cmd)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if sc.Text() == "ready" {
					ready <- struct{}{}
				}
			}
		}()
	}
	client, err := js.NewClient(ctx, conn)
	if err != nil {
		return result{}, err
	}
	defer client.Close()
	// Wait until every worker serves (the kernel compiled and loaded on its device).
	up := time.After(5 * time.Minute)
	for range devices {
		select {
		case <-ready:
		case <-up:
			return result{}, errors.New("workers did not come up within 5 minutes")
		case <-ctx.Done():
			return result{}, ctx.Err()
		}
	}
	name := fmt.Sprintf("jetstream, %d workers", devices)
	if kill > 0 {
		name += ", 1 killed"
		killer := time.AfterFunc(kill, func() { _ = workers[0].Process.Kill() })
		defer killer.Stop()
	}
	futs := make([]*js.Future, c.jobs)
	begun := make([]time.Time, c.jobs)
	start := time.Now()
	for i := range futs {
		begun[i] = time.Now()
		futs[i] = client.Submit(ctx, js.Job{Handler: "mix", Input: binary.LittleEndian.AppendUint32(nil, uint32(i))})
	}
	lat := make([]time.Duration, c.jobs)
	for i, f := range futs {
		out, err := f.Wait(ctx)
		if err == nil {
			err = check(uint32(i), c.rounds, out)
		}
		if err != nil {
			return result{}, fmt.Errorf("job %d: %w", i, err)
		}
		lat[i] = time.Since(begun[i])
	}
	return figures(name, lat, time.Since(start)), nil
}
