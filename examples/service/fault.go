package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/streams"
)

// The faults -fault injects.
const (
	faultPoison = "poison" // a kernel that traps: the GPU's context fails for good
	faultKill   = "kill"   // kill -9 of the device's worker process
)

// inject hits device i of the group (its place, as Group.Devices lists them) with fault, and
// returns once the device has failed. The group then reopens it in a new worker.
func (s *service) inject(ctx context.Context, fault string, i int) error {
	d := s.g.Devices()[i]
	switch fault {
	case faultKill:
		pid := d.WorkerPID()
		if pid == 0 {
			return fmt.Errorf("-fault kill: device %d has no worker process", d.Ordinal())
		}
		p, err := os.FindProcess(pid)
		if err != nil {
			return err
		}
		if err := p.Kill(); err != nil {
			return fmt.Errorf("-fault kill: device %d's worker %d: %w", d.Ordinal(), pid, err)
		}
		return awaitFailure(ctx, d) // the device learns that its worker died
	case faultPoison:
		// On the simulator, sim.Simulator.Fail would fault the device without a kernel; a
		// poisoned kernel works the same on a GPU and on the simulator.
		k, err := kernelsOn(ctx, s.prog, d)
		if err != nil {
			return err
		}
		st, err := streams.New(ctx, d)
		if err != nil {
			return err
		}
		err = st.Launch(ctx, k.poison, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(1)}).Wait(ctx)
		_ = st.Close(context.WithoutCancel(ctx)) // fails on the failed device, as everything does
		if !errors.Is(err, device.ErrDeviceFailed) {
			return fmt.Errorf("-fault poison: device %d: the poisoned kernel did not fail the device: %v", d.Ordinal(), err)
		}
		return nil
	}
	return fmt.Errorf("-fault %q: want %s or %s", fault, faultPoison, faultKill)
}

// awaitFailure waits until d knows it failed.
func awaitFailure(ctx context.Context, d *device.Device) error {
	for d.Err() == nil {
		select {
		case <-ctx.Done():
			return fmt.Errorf("device %d did not fail: %w", d.Ordinal(), ctx.Err())
		case <-time.After(time.Millisecond):
		}
	}
	return nil
}
