// Package group fans jobs out over several devices: it places each job on a device, hands it
// a stream of that device from a pool, runs it, and completes its future.
//
//	devs, _ := device.OpenAll(ctx)
//	prog := device.NewProgram(src) // compiled once, loaded on each device that asks
//	defer prog.Close(ctx)
//	g, _ := group.New(ctx, devs)
//	defer g.Close(ctx)
//	f := g.Submit(ctx, func(ctx context.Context, d *device.Device, s *streams.Stream) error {
//		k, err := prog.Kernel(ctx, d, "saxpy") // the kernel on the device the job runs on
//		if err != nil {
//			return err
//		}
//		return s.Launch(ctx, k, cfg, args...).Wait(ctx)
//	})
//	err := f.Wait(ctx)
//
// A job looks its kernel up by the device it was given, through a device.Program, not in a
// slice indexed by ordinal: a module belongs to the one device it was loaded on, and a device
// replaced by a restart (WithRestart) is a new device of the same ordinal, on which the old
// device's kernels fail to launch (device.ErrWrongDevice). WithSetup runs a function on every
// device before it takes a job, in New and after each restart: the place to load kernels and
// make per-device state ahead of the first job.
//
// Placement is a Policy: the device with the fewest outstanding jobs (the default, which gives
// a faster device more work, as it finishes sooner), round robin, affinity by key, or memory:
// a job that declares the bytes it needs (Bytes) runs where they fit and waits where they do
// not. The queue is bounded (WithQueue): Submit waits for room, or fails at once with
// WithFailFast, and always honours its context; a job cancelled while queued leaves the queue
// at once, a running one sees its context end. A device that fails (Device.Err) leaves
// placement: the jobs queued for it move to the others, and a job that was running on it
// fails with an error naming the device (a *DeviceError), or, marked Idempotent, runs again
// elsewhere. On
// GPUs, what fails one in-process device may fail them all: a kernel fault (an illegal
// address, a trap, a failed assert) is sticky for the whole process, so every GPU of the
// process answers it from then on (docs/faults.md); once no device is left, every job still
// queued fails with ErrNoDevice. Devices that must outlive each other's kernel faults are
// opened device.Isolated, one worker process each (on the simulator, sim.WithConfinedFaults).
//
// WithRestart brings a failed device back, under a restart policy of package supervise: the
// group closes the failed device and its streams, asks the open function it was given for a
// device in its place (on GPUs, one in a worker process of its own: device.Isolated), makes
// its streams, and places jobs on it again; Devices and Stats show the new device, and
// DeviceStats.Restarts counts the restarts. While every device is down and one restarts, jobs
// wait for it; once the restarts are spent the device stays failed. A job that was running
// when its device was replaced fails with a *DeviceError naming both generations
// (ErrDeviceReplaced). The group owns the devices open returned and closes them with itself;
// it also closes a device of the caller's that failed, which the caller's own Close then finds
// closed, harmlessly.
//
// Do runs a job and returns its error: on the calling goroutine when a stream is free, which
// spares the hand-offs to a worker and back. Go and Wait run jobs errgroup-style, with no
// goroutine per job, and BatchContext gives them a context their first error cancels. Map
// splits a slice over the devices and gathers the results; MapTo gathers them in one device's
// memory, over peer links where the devices have them. Pipe is the stage of a pipeline: it
// reads items from a channel, runs each as a job, and sends each item's Result on a channel,
// in completion or input order, with backpressure through both channels.
//
// The group owns its streams, and the devices it opened in restarts, not the devices given to
// New. Close(ctx) stops the group and closes what it owns: close it, then the devices. A
// service stopping for good calls Shutdown(ctx) instead, which also shuts down every device the
// group holds, the caller's included (device.Device.Shutdown), within ctx.
package group
