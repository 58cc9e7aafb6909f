package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/streams"
)

// warm readies device d before it takes requests, when the service starts and after each
// restart (the group's setup hook, group.WithSetup): it loads prog's kernels on d and runs one
// small saxpy, checked, which also makes the first slot of d's staging pool. A device that
// fails this does not join the group; a restart that fails it counts as a failed restart.
func warm(ctx context.Context, prog *device.Program, d *device.Device) error {
	st, err := streams.New(ctx, d)
	if err != nil {
		return fmt.Errorf("warming device %d: %w", d.Ordinal(), err)
	}
	x, y, out := []float32{1, 2, 3, 4}, []float32{10, 20, 30, 40}, make([]float32, 4)
	err = saxpy(ctx, prog, d, st, 2, x, y, out)
	err = errors.Join(err, st.Close(context.WithoutCancel(ctx)))
	if err != nil {
		return fmt.Errorf("warming device %d: %w", d.Ordinal(), err)
	}
	for i := range out {
		if want := 2*x[i] + y[i]; out[i] != want {
			return fmt.Errorf("warming device %d: saxpy element %d is %v, want %v", d.Ordinal(), i, out[i], want)
		}
	}
	return nil
}
