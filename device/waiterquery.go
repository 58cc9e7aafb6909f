package device

import (
	"fmt"
	"strconv"

	"github.com/gpuactor/gpuactor/actor"
)

// WaiterQuery says whether a caller awaiting a stream operation's future may ask the GPU
// itself whether the operation has completed (ActorTuning.WaiterQuery).
type WaiterQuery int8

const (
	// WaiterQueryDefault keeps the library's default, which is WaiterQueryOff.
	WaiterQueryDefault WaiterQuery = iota
	// WaiterQueryOn: a caller spinning in Await (or Wait) on a stream operation's future,
	// past its first tight polls and with a token of the process's spin budget, queries the
	// event that will mark the operation complete, from its own thread, and completes the
	// future as soon as CUDA says the GPU has passed it, rather than waiting for the actor's
	// next query to notice. Results and errors are the same either way: an error met by the
	// caller's query is left to the actor to report. Devices whose backend cannot be asked
	// from any thread (isolated devices) ignore it. See docs/design/waiter-completion.md.
	WaiterQueryOn
	// WaiterQueryOff: only the device's actor asks the GPU, as every other CUDA call of
	// the device is made on its thread.
	WaiterQueryOff
)

// String is "default", "on" or "off".
func (w WaiterQuery) String() string {
	switch w {
	case WaiterQueryDefault:
		return "default"
	case WaiterQueryOn:
		return "on"
	case WaiterQueryOff:
		return "off"
	}
	return "WaiterQuery(" + strconv.Itoa(int(w)) + ")"
}

// enabled reports whether w turns waiter-side queries on, or an error for a value out of range.
func (w WaiterQuery) enabled() (bool, error) {
	switch w {
	case WaiterQueryDefault, WaiterQueryOff:
		return false, nil
	case WaiterQueryOn:
		return true, nil
	}
	return false, fmt.Errorf("%w: waiter query %d: want WaiterQueryDefault, WaiterQueryOn or WaiterQueryOff (ActorTuning.WaiterQuery)", actor.ErrBadOption, int(w))
}
