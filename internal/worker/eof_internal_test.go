//go:build linux

package worker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The second guard against outliving the parent, beside Pdeathsig: a worker whose control
// socket reads EOF (its parent is gone) exits on its own, cleanly.
func TestWorkerExitsOnControlEOF(t *testing.T) {
	for _, size := range []int{DefaultRingSize, 0} {
		p, err := Start(context.Background(), WithRingSize(size))
		require.NoError(t, err)
		require.NoError(t, p.ctl.close()) // what the worker sees when its parent has died
		select {
		case <-p.Done():
		case <-time.After(2 * time.Second):
			t.Fatal("the worker did not exit")
		}
		d, ok := errors.AsType[*DiedError](p.Err())
		require.True(t, ok, "%v", p.Err())
		assert.Equal(t, "exit status 0", d.Status, "it exited by itself, not killed")
		require.NoError(t, p.Close())
	}
}
