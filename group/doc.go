// Package group fans jobs out over several devices: it places each job on a device, hands it
// a stream of that device from a pool, runs it, and completes its future.
//
//	devs, _ := device.OpenAll(ctx)
//	g, _ := group.New(ctx, devs)
//	defer g.Close()
//	f := g.Submit(ctx, func(ctx context.Context, d *device.Device, s *streams.Stream) error {
//		return s.Launch(ctx, k[d.Ordinal()], cfg, args...).Wait(ctx)
//	})
//	err := f.Wait(ctx)
//
// Placement is a Policy: the device with the fewest outstanding jobs (the default, which gives
// a faster device more work, as it finishes sooner), round robin, affinity by key, or memory:
// a job that declares the bytes it needs (Bytes) runs where they fit and waits where they do
// not. The queue is bounded (WithQueue): Submit waits for room, or fails at once with
// WithFailFast, and always honours its context; a job cancelled while queued leaves the queue
// at once, a running one sees its context end. A device that fails (Device.Err) leaves
// placement: the jobs queued for it move to the others, and a job that was running on it
// fails with an error naming the device, or, marked Idempotent, runs again elsewhere.
//
// Do runs a job and returns its error: on the calling goroutine when a stream is free, which
// spares the hand-offs to a worker and back. Go and Wait run jobs errgroup-style; Map splits a
// slice over the devices and gathers the results; MapTo gathers them in one device's memory,
// over peer links where the devices have them. The group owns its streams, not the devices: Close the group, then the devices.
package group
