package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/group"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/supervise"
)

// summary is what a run saw: the load's report, each device's health once the faults were
// over, and each device's state after shutdown ("closed", "closed, failed: why" or "open").
type summary struct {
	load   report
	traces []string // the slow requests' trace files written (-trace-slow)
	after  health
	final  []string
}

// deviceOptions are the options every device of the service is opened with, the first time
// and on each restart.
func deviceOptions(c config) ([]device.Option, error) {
	opts := []device.Option{device.Isolated(), device.WithStagingLimit(uint64(c.stagingMiB) << 20)}
	if c.backend != "" {
		opts = append(opts, device.WithBackend(device.BackendKind(c.backend)))
	}
	if c.sim > 0 {
		if c.backend != "" && c.backend != string(device.BackendSim) {
			return nil, fmt.Errorf("-sim %d and -backend %s: the simulated devices are the sim backend's", c.sim, c.backend)
		}
		// One machine for every open: each device's worker simulates the machine it
		// describes, and a restarted device is its ordinal on it again.
		opts = append(opts, device.WithSimulator(sim.New(sim.WithDevices(c.sim))))
	}
	if c.park { // see the device package's "What the actor costs in CPU"
		opts = append(opts, device.WithActorTuning(device.ActorTuning{Spin: device.NoSpin, BusySpin: device.NoSpin, AwaitSpin: device.NoSpin}))
	}
	return opts, nil
}

// openGroup opens every device and makes the group over them, which warms each device before it
// takes work (WithSetup) and reopens a device that fails (in a new worker), warmed too, noting
// its failure in faults. prog's kernels load on every device, now and after restarts.
func openGroup(ctx context.Context, c config, prog *device.Program, faults *faultLog) (*group.Group, []*device.Device, error) {
	opts, err := deviceOptions(c)
	if err != nil {
		return nil, nil, err
	}
	devs, err := device.OpenAll(ctx, opts...)
	if err != nil {
		return nil, nil, err
	}
	reopen := func(ctx context.Context, failed *device.Device) (*device.Device, error) {
		faults.note(failed)
		return device.Open(ctx, failed.Ordinal(), opts...)
	}
	setup := func(ctx context.Context, d *device.Device) error { return warm(ctx, prog, d) }
	g, err := group.New(ctx, devs, group.WithStreams(c.perDevice), group.WithLogger(c.log), group.WithSetup(setup),
		group.WithRestart(reopen, supervise.WithRestarts(c.restarts, time.Minute)))
	if err != nil {
		return nil, nil, errors.Join(err, closeAll(devs))
	}
	return g, devs, nil
}

func run(ctx context.Context, c config) (sum summary, err error) {
	if c.clients <= 0 || c.size < 4 || c.size%4 != 0 || c.perDevice <= 0 || c.stagingMiB <= 0 || c.sim < 0 || c.restarts <= 0 {
		return sum, errors.New("-clients, -streams, -staging and -restarts must be positive, -sim not negative and -size a positive multiple of 4")
	}
	if c.fault != "" && c.fault != faultPoison && c.fault != faultKill {
		return sum, fmt.Errorf("-fault %q: want %s or %s", c.fault, faultPoison, faultKill)
	}
	faults, prog := &faultLog{}, newProgram()
	defer prog.Close(context.WithoutCancel(ctx))
	g, devs, err := openGroup(ctx, c, prog, faults)
	if err != nil {
		return sum, err
	}
	if c.fault != "" && (c.faultDevice < 0 || c.faultDevice >= len(devs)) {
		return sum, errors.Join(fmt.Errorf("-fault-device %d: the service has %d devices", c.faultDevice, len(devs)), g.Close(ctx), closeAll(devs))
	}
	for _, d := range devs {
		p := d.Properties()
		fmt.Fprintf(c.out, "device %d: %s (compute %s, %s backend, isolated %v)\n", d.Ordinal(), p.Name, p.ComputeCapability, d.Backend(), d.Isolated())
	}
	svc := newService(g, prog, faults)
	svc.reuse = c.reuseBuffers
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return sum, errors.Join(err, g.Close(ctx), closeAll(devs))
	}
	srv := &http.Server{Handler: svc.handler(), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	url := "http://" + ln.Addr().String()
	fmt.Fprintf(c.out, "serving on %s: POST /saxpy?a=A, GET /healthz, GET /metrics\n", url)

	injected := make(chan error, 1)
	if c.fault != "" {
		go func() {
			select {
			case <-time.After(c.faultAfter):
				err := svc.inject(ctx, c.fault, c.faultDevice)
				c.log.Info("service: fault injected", "fault", c.fault, "device", c.faultDevice, "error", err)
				injected <- err
			case <-ctx.Done():
				injected <- nil
			}
		}()
	} else {
		injected <- nil
	}

	var errs []error
	if c.load {
		var tr *slowTracer
		if c.traceSlow > 0 {
			if tr, err = startSlowTracer(c.traceSlow, c.traceWindow, uint64(max(c.traceBytes, 0)), c.traceDir, c.traceMax, c.log); err != nil {
				return sum, errors.Join(err, srv.Close(), g.Close(ctx), closeAll(devs))
			}
		}
		stopProfile, err := startCPUProfile(c.cpuProfile)
		if err != nil {
			tr.stop()
			return sum, errors.Join(err, srv.Close(), g.Close(ctx), closeAll(devs))
		}
		var loadErr error
		before, t0 := deviceSnapshot(g.Devices()), time.Now()
		sum.load, loadErr = generateLoad(ctx, url, c, tr)
		errs = append(errs, stopProfile())
		sum.load.devices = deviceLoads(before, deviceSnapshot(g.Devices()), time.Since(t0))
		sum.traces = tr.stop()
		errs = append(errs, loadErr, <-injected)
		sum.after, err = awaitHealthy(ctx, url, c.grace)
		errs = append(errs, err, awaitNoJobs(ctx, g, c.grace))
		svc.kept.release(ctx) // no job runs now: the kept buffers are the service's, not a leak
		errs = append(errs, awaitNothingLeft(ctx, g, c.grace))
	} else {
		select {
		case <-ctx.Done():
			errs = append(errs, <-injected)
		case err := <-served:
			return sum, errors.Join(err, g.Close(ctx), closeAll(devs))
		}
	}

	// Graceful: the server answers what it accepted, then the group finishes its jobs, closes
	// its streams and shuts down every device it holds, within the deadline.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.grace)
	defer cancel()
	errs = append(errs, srv.Shutdown(sctx))
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		errs = append(errs, err)
	}
	if err := awaitNoJobs(sctx, g, c.grace); err == nil {
		svc.kept.release(sctx) // before the group closes the streams they are ordered on
	}
	now := g.Devices()
	errs = append(errs, g.Shutdown(sctx))
	for _, d := range now {
		st := d.Stats()
		switch {
		case !st.Closed:
			sum.final = append(sum.final, "open")
		case st.Failure != "":
			sum.final = append(sum.final, "closed, failed: "+st.Failure)
		default:
			sum.final = append(sum.final, "closed")
		}
	}
	if c.load {
		sum.load.print(c.out)
		for _, f := range sum.traces {
			fmt.Fprintf(c.out, "slow request trace: %s\n", f)
		}
		for i, st := range sum.final {
			fmt.Fprintf(c.out, "device %d: generation %d, %s\n", now[i].Ordinal(), sum.after.Devices[i].Generation, st)
		}
	}
	return sum, errors.Join(errs...)
}

// awaitHealthy asks url's /healthz until every device is healthy, for at most within, and
// returns its last answer; an error when a device is still not.
func awaitHealthy(ctx context.Context, url string, within time.Duration) (health, error) {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	var h health
	for {
		h = health{}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/healthz", nil)
		if err != nil {
			return h, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&h)
			resp.Body.Close()
		}
		if err == nil && h.Healthy == len(h.Devices) {
			return h, nil
		}
		select {
		case <-ctx.Done():
			return h, fmt.Errorf("/healthz: %d of %d devices healthy after %v (%v): %+v", h.Healthy, len(h.Devices), within, err, h.Devices)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// awaitNothingLeft waits, for at most within, until the group's devices have no operation in
// flight, and returns an error naming what a device still holds then: stream-ordered buffers
// or staging memory that the requests, cancelled ones included, should have given back.
func awaitNothingLeft(ctx context.Context, g *group.Group, within time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	for {
		var left []error
		for _, d := range g.Stats().Devices {
			st := d.Device
			if st.InFlight != 0 || st.Memory.Async.Count != 0 || st.Staging.InUseBytes != 0 || d.Running != 0 || d.Queued != 0 {
				left = append(left, fmt.Errorf("device %d holds %d jobs, %d operations in flight, %d stream-ordered buffers and %d staging bytes",
					st.Ordinal, d.Running+d.Queued, st.InFlight, st.Memory.Async.Count, st.Staging.InUseBytes))
			}
		}
		if len(left) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.Join(left...)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// awaitNoJobs waits, for at most within, until the group runs and queues no job: the jobs of
// requests whose clients left may still run after the handlers returned.
func awaitNoJobs(ctx context.Context, g *group.Group, within time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	for {
		var jobs int64
		for _, d := range g.Stats().Devices {
			jobs += d.Running + d.Queued
		}
		if jobs == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the group still holds %d jobs after %v", jobs, within)
		case <-time.After(time.Millisecond):
		}
	}
}

// closeAll closes every device of devs: after a failed start.
func closeAll(devs []*device.Device) error {
	var errs []error
	for _, d := range devs {
		errs = append(errs, d.Close())
	}
	return errors.Join(errs...)
}
