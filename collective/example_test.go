package collective_test

import (
	"context"
	"fmt"
	"log"
	"sync"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/collective"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/group"
	"github.com/gpuactor/gpuactor/streams"
)

// Every local GPU as one rank: an all-reduce of each GPU's vector.
func Example() {
	ctx := context.Background()
	devs, err := device.OpenAll(ctx)
	if err != nil {
		log.Fatal(err)
	}
	comms, err := collective.NewLocal(ctx, devs)
	if err != nil {
		log.Fatal(err) // collective.ErrNoNCCL: no libnccl found (the error lists where it looked)
	}
	fs := make([]*streams.Future, len(comms))
	bufs := make([]*alloc.Buffer[float32], len(comms))
	for r, c := range comms {
		s := streams.Default(c.Device())
		bufs[r], _ = alloc.Malloc[float32](ctx, s, 1024)
		_ = bufs[r].CopyIn(ctx, make([]float32, 1024))
		fs[r] = collective.AllReduce(ctx, s, c, bufs[r], bufs[r], collective.Sum) // in place
	}
	for _, f := range fs {
		if err := f.Wait(ctx); err != nil {
			log.Fatal(err)
		}
	}
	// Each rank closes on its own goroutine: a blocking communicator's finalize may wait
	// for the other ranks'.
	var wg sync.WaitGroup
	for _, c := range comms {
		wg.Go(func() { _ = c.Close(ctx) })
	}
	wg.Wait()
}

// Sends and receives of an exchange go in one Group: each rank's part is issued on its
// own device's actor between ncclGroupStart and ncclGroupEnd.
func ExampleGroup() {
	ctx := context.Background()
	devs, _ := device.OpenAll(ctx)
	comms, err := collective.NewLocal(ctx, devs)
	if err != nil {
		log.Fatal(err)
	}
	n := len(comms)
	var g collective.Group
	for r, c := range comms {
		s := streams.Default(c.Device())
		out, _ := alloc.Malloc[int32](ctx, s, 256)
		in, _ := alloc.Malloc[int32](ctx, s, 256)
		g.Add(collective.SendOp(s, c, out, (r+1)%n), collective.RecvOp(s, c, in, (r+n-1)%n))
	}
	if err := g.Run(ctx); err != nil { // a ring shift
		log.Fatal(err)
	}
}

// Two processes (or hosts), one rank each: rank 0 makes the ID and hands it over.
func ExampleJoin() {
	ctx := context.Background()
	dev, _ := device.Open(ctx, 0)
	rank, nranks := 0, 2
	var id collective.ID
	if rank == 0 {
		id, _ = collective.NewID(ctx, dev)
		// … send id's 128 bytes to the other ranks (a file, a socket, a config service) …
	} // … else receive it …
	c, err := collective.Join(ctx, dev, id, nranks, rank)
	if err != nil {
		log.Fatal(err) // with ctx's deadline and a peer missing: collective.ErrAborted
	}
	fmt.Println(c.Rank(), "of", c.Count())
	_ = c.Close(ctx)
}

// A collective job on every device of a fan-out group.
func ExampleForGroup() {
	ctx := context.Background()
	devs, _ := device.OpenAll(ctx)
	g, _ := group.New(ctx, devs)
	ranks, err := collective.ForGroup(ctx, g)
	if err != nil {
		log.Fatal(err)
	}
	err = ranks.Run(ctx, func(ctx context.Context, c *collective.Comm, s *streams.Stream) error {
		grad, err := alloc.Malloc[float32](ctx, s, 1<<20)
		if err != nil {
			return err
		}
		defer grad.Close(ctx)
		// … compute this device's gradient into grad …
		return collective.AllReduce(ctx, s, c, grad, grad, collective.Avg).Wait(ctx)
	})
	if err != nil {
		log.Fatal(err)
	}
	_ = ranks.Close(ctx)
	_ = g.Close(ctx)
}
