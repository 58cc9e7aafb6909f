package actor_test

import (
	"context"
	"fmt"

	"github.com/gpuactor/gpuactor/actor"
)

// An actor runs every op on its one goroutine; Call returns at once with a future of the
// op's result, which any number of goroutines may wait on.
func ExampleCall() {
	a, err := actor.New(actor.WithName("counter"))
	if err != nil {
		panic(err)
	}
	defer a.Close()
	ctx := context.Background()

	count := 0 // touched only on the actor's goroutine: no lock needed
	var fs []*actor.Future[int]
	for range 3 {
		fs = append(fs, actor.Call(ctx, a, func() (int, error) { count++; return count, nil }))
	}
	for _, f := range fs {
		n, err := f.Await(ctx)
		fmt.Println(n, err)
	}
	// Output:
	// 1 <nil>
	// 2 <nil>
	// 3 <nil>
}

// A Promise is the write side of a Future: the producer keeps it, and hands out the future,
// which can be waited on but not completed.
func ExamplePromise() {
	p := actor.NewPromise[string]()
	go p.Complete("done", nil)
	v, err := p.Future().Await(context.Background())
	fmt.Println(v, err)
	// Output: done <nil>
}

// WaitAll waits for a set of futures of any result types, and reports the first error.
func ExampleWaitAll() {
	a, err := actor.New()
	if err != nil {
		panic(err)
	}
	defer a.Close()
	ctx := context.Background()
	name := actor.Call(ctx, a, func() (string, error) { return "gpu", nil })
	size := actor.Call(ctx, a, func() (int, error) { return 0, fmt.Errorf("no size") })
	fmt.Println(actor.WaitAll(ctx, name, size))
	// Output: no size
}
