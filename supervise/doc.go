// Package supervise restarts what fails, in the Erlang manner: a Supervisor holds one child (a
// device, or anything that fails and closes as one does), watches it, and when it fails closes
// it and starts a new one, at most a given number of times in a window, after which it gives
// up and stays failed.
//
//	sup, err := supervise.New(ctx, func(ctx context.Context) (*device.Device, error) {
//		return device.Open(ctx, 0, device.WithWatchdog(10*time.Second))
//	}, supervise.WithRestarts(3, time.Minute), supervise.OnRestart(func(gen int) { ... }))
//	dev, err := sup.Current()
//
// Inside one process a GPU that took a sticky fault cannot come back (docs/faults.md): opening
// it again fails, so a supervisor of an in-process device fails cleanly, telling its observers,
// once its restarts are spent. A child that runs the device in a process of its own restarts
// for real.
package supervise
