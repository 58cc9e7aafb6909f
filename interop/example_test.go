package interop_test

import (
	"context"
	"fmt"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/interop"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

// Two devices of one machine (simulated here, so the example runs everywhere): device 0 gets
// access to device 1's memory, and a stream of device 0 copies a buffer of device 1 into one
// of its own.
func Example_peerCopy() {
	ctx := context.Background()
	machine := sim.New(sim.WithDevices(2))
	d0, err := device.Open(ctx, 0, device.WithSimulator(machine))
	if err != nil {
		panic(err)
	}
	defer d0.Close()
	d1, err := device.Open(ctx, 1, device.WithSimulator(machine))
	if err != nil {
		panic(err)
	}
	defer d1.Close()

	ok, err := interop.CanAccessPeer(ctx, d0, d1)
	if err != nil {
		panic(err)
	}
	fmt.Println("device 0 can reach device 1:", ok)
	if err := interop.EnablePeerAccess(ctx, d0, d1); err != nil {
		panic(err)
	}

	src, err := d1.MallocBytes(ctx, 4*4)
	if err != nil {
		panic(err)
	}
	defer src.Close(ctx)
	dst, err := d0.MallocBytes(ctx, 4*4)
	if err != nil {
		panic(err)
	}
	defer dst.Close(ctx)
	s0, s1 := streams.Default(d0), streams.Default(d1)
	if err := streams.CopyToDevice(ctx, s1, src, []int32{1, 2, 3, 4}).Wait(ctx); err != nil {
		panic(err)
	}
	// One copy between the two devices: the future completes when the GPU has done it.
	if err := s0.Copy(ctx, dst, src).Wait(ctx); err != nil {
		panic(err)
	}
	got := make([]int32, 4)
	if err := streams.CopyFromDevice(ctx, s0, got, dst).Wait(ctx); err != nil {
		panic(err)
	}
	fmt.Println(got)
	// Output:
	// device 0 can reach device 1: true
	// [1 2 3 4]
}
