package cuda

import "fmt"

// ConditionalHandle is a graph's conditional variable (cudaGraphConditionalHandle): the value a
// conditional node of the graph reads to pick its body. Kernels take it as an argument (a
// 64-bit value, cudaGraphConditionalHandle in CUDA C++) and set it with
// cudaGraphSetConditional; a simulated kernel sets it with SimSetConditional.
type ConditionalHandle uint64

// SimConditionals sets the conditional variables of the graph launch a simulated kernel runs
// in.
type SimConditionals interface {
	// SetConditional sets the variable h to value, or fails naming h when h is not a
	// conditional handle of the launched graph.
	SetConditional(h ConditionalHandle, value uint32) error
}

// SimSetConditional is cudaGraphSetConditional for a simulated kernel: it sets the conditional
// variable h of the graph launch the kernel runs in. It panics (a launch failure on the
// simulator) when the kernel is not running in a graph launch or h is not a handle of the
// launched graph, as setting a foreign handle is undefined on a GPU.
func SimSetConditional(c *KernelCall, h ConditionalHandle, value uint32) {
	if c.Conditionals == nil {
		panic(fmt.Sprintf("sim kernel: SimSetConditional(%#x) outside a graph launch", uint64(h)))
	}
	if err := c.Conditionals.SetConditional(h, value); err != nil {
		panic(fmt.Sprintf("sim kernel: %v", err))
	}
}

// Handle is argument i as a conditional handle (passed as a ConditionalHandle or a uint64).
func (c *KernelCall) Handle(i int) ConditionalHandle { return ConditionalHandle(c.arg(i, Uint64)) }
