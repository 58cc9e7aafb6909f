// Command service is a GPU-backed HTTP service: POST /saxpy runs y = a*x + y on whichever
// device holds the fewest requests, on a stream borrowed from that device's pool, bounded by
// the request's context. GET /debug/vars serves expvar's variables with every device's Stats.
// On SIGINT or SIGTERM it shuts down gracefully: the HTTP server first (answering what it
// accepted), then each device within a deadline.
//
// With -load it also runs a load generator against itself: -clients clients, each sending
// requests of -size bytes per vector for -duration and checking every element of every answer
// (a fraction -cancel of them cancelled at a random moment), then shuts down and prints
// req/s, p50/p99 latency, requests per device and each device's staging memory against its
// cap. Without a GPU it runs on the simulator.
//
//	go run ./examples/service -load -clients 64 -size 16384 -duration 10s
//	go run ./examples/service -addr 127.0.0.1:8080
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
)

type config struct {
	addr         string
	load         bool
	clients      int
	size         int // bytes of x (and of y) per request
	duration     time.Duration
	cancel       float64       // fraction of requests cancelled
	cancelWithin time.Duration // when a cancelled request is cancelled, at most
	perDevice    int           // streams per device
	stagingMiB   int
	grace        time.Duration // how long shutdown waits for work in progress
	park         bool          // the actors park instead of spinning
	sample.Flags
}

func main() {
	var c config
	flag.StringVar(&c.addr, "addr", "127.0.0.1:8080", "listen address (with -load: 127.0.0.1:0)")
	flag.BoolVar(&c.load, "load", false, "run a load generator against the service, then shut down")
	flag.IntVar(&c.clients, "clients", 64, "load: concurrent clients")
	flag.IntVar(&c.size, "size", 16<<10, "load: bytes per vector per request (x and y each)")
	flag.DurationVar(&c.duration, "duration", 10*time.Second, "load: how long to send requests")
	flag.Float64Var(&c.cancel, "cancel", 0, "load: fraction of requests cancelled at a random moment")
	flag.DurationVar(&c.cancelWithin, "cancel-within", time.Millisecond, "load: cancelled requests end within this")
	flag.IntVar(&c.perDevice, "streams", 8, "streams per device")
	flag.IntVar(&c.stagingMiB, "staging", 256, "staging pool cap per device, MiB")
	flag.DurationVar(&c.grace, "grace", 10*time.Second, "shutdown deadline")
	flag.BoolVar(&c.park, "park", false, "actors park instead of spinning: less CPU, more latency per request")
	c.RegisterBackend()
	flag.Parse()
	if c.load && c.addr == "127.0.0.1:8080" {
		c.addr = "127.0.0.1:0"
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sample.Finish(run(ctx, c))
}

func run(ctx context.Context, c config) (err error) {
	if c.clients <= 0 || c.size < 4 || c.size%4 != 0 || c.perDevice <= 0 || c.stagingMiB <= 0 {
		return errors.New("-clients, -streams and -staging must be positive and -size a positive multiple of 4")
	}
	opts := append(c.Options(), device.WithStagingLimit(uint64(c.stagingMiB)<<20))
	if c.park { // see the device package's "What the actor costs in CPU"
		opts = append(opts, device.WithActorTuning(device.ActorTuning{Spin: device.NoSpin, BusySpin: device.NoSpin, AwaitSpin: device.NoSpin}))
	}
	devs, err := device.OpenAll(ctx, opts...)
	if err != nil {
		return err
	}
	for _, d := range devs {
		sample.Describe(d)
	}
	svc, err := newService(ctx, devs, c.perDevice)
	if err != nil {
		return errors.Join(err, shutdownDevices(devs, c.grace))
	}
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return errors.Join(err, svc.close(ctx), shutdownDevices(devs, c.grace))
	}
	srv := &http.Server{Handler: svc.handler(), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	url := "http://" + ln.Addr().String()
	fmt.Printf("serving on %s: POST /saxpy?a=A, GET /debug/vars\n", url)

	var rep report
	var loadErr error
	if c.load {
		rep, loadErr = generateLoad(ctx, url, c)
	} else {
		select {
		case <-ctx.Done():
		case err := <-served:
			return errors.Join(err, svc.close(ctx), shutdownDevices(devs, c.grace))
		}
	}

	// Graceful: the server answers what it accepted, then the streams go, then the devices
	// finish their work within the deadline.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.grace)
	defer cancel()
	errs := []error{loadErr, srv.Shutdown(sctx)}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		errs = append(errs, err)
	}
	errs = append(errs, svc.close(sctx))
	if c.load {
		rep.print()
		errs = append(errs, checkStaging(svc))
	}
	errs = append(errs, shutdownDevices(devs, c.grace))
	return errors.Join(errs...)
}

// checkStaging prints each device's staging pool against its cap, and fails if one pinned more.
func checkStaging(svc *service) error {
	var errs []error
	for _, g := range svc.gpus {
		st := g.dev.Stats()
		fmt.Printf("device %d: %d requests served; staging pinned %d MiB of its %d MiB cap, %d copies waited for a slot; operation latency p50 %v, p99 %v\n",
			st.Ordinal, g.served.Load(), st.Staging.PinnedBytes>>20, st.Staging.LimitBytes>>20, st.Staging.Waits,
			st.Latency.Quantile(0.5).Round(time.Microsecond), st.Latency.Quantile(0.99).Round(time.Microsecond))
		if st.Staging.PinnedBytes > st.Staging.LimitBytes {
			errs = append(errs, fmt.Errorf("device %d pinned %d bytes for staging, past its cap of %d", st.Ordinal, st.Staging.PinnedBytes, st.Staging.LimitBytes))
		}
		if st.Memory.Async.Count != 0 || st.Staging.InUseBytes != 0 {
			errs = append(errs, fmt.Errorf("device %d left %d stream-ordered buffers and %d staging bytes behind", st.Ordinal, st.Memory.Async.Count, st.Staging.InUseBytes))
		}
	}
	return errors.Join(errs...)
}

// shutdownDevices shuts every device down within grace, at once.
func shutdownDevices(devs []*device.Device, grace time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	errs := make(chan error, len(devs))
	for _, d := range devs {
		go func() { errs <- d.Shutdown(ctx) }()
	}
	var all []error
	for range devs {
		all = append(all, <-errs)
	}
	return errors.Join(all...)
}
