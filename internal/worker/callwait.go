package worker

import (
	"context"
	"runtime"
	"time"

	"github.com/gpuactor/gpuactor/internal/spin"
)

// awaitReply waits for a call's reply on ch, until ctx ends.
//
// It polls ch first, for the rings' spin window and only with a token of the process's spin
// budget, then blocks. The caller is typically an isolated device's actor, which sends its
// calls one after another. Parked on ch, it is woken by the ring reader's send and queued on
// the reader's P, where it waits until the spinning reader yields or another P steals it (a
// locked caller, until its own thread is woken too): a hand-off per call, on the path of
// every answer. Polling, the send lands in ch's buffer and nobody is woken.
func (p *Process) awaitReply(ctx context.Context, ch chan reply) (reply, error) {
	if r, ok := p.spinReply(ctx, ch); ok {
		return r, nil
	}
	p.callParks.Add(1)
	select {
	case r := <-ch:
		return r, nil
	case <-ctx.Done():
		// The reply may have landed as ctx ended: prefer it, it is the truth.
		select {
		case r := <-ch:
			return r, nil
		default:
		}
		return reply{}, ctx.Err()
	}
}

// spinReply polls ch for the spin window and reports whether a reply came. It gives up at
// once without a token of the budget, when the window is 0, and when ctx ends.
func (p *Process) spinReply(ctx context.Context, ch chan reply) (reply, bool) {
	window := p.cfg.ringSpin
	if window <= 0 || runtime.NumCPU() < 2 || !spin.Acquire() {
		return reply{}, false
	}
	defer spin.Release()
	done := ctx.Done()
	start := time.Now()
	for i := 1; ; i++ {
		select {
		case r := <-ch:
			return r, true
		default:
		}
		if i&63 != 0 {
			continue
		}
		if time.Since(start) >= window {
			return reply{}, false
		}
		if done != nil {
			select {
			case <-done:
				return reply{}, false
			default:
			}
		}
		if i&4095 == 0 {
			runtime.Gosched() // a long wait: let the goroutines queued on this P run
		}
	}
}
