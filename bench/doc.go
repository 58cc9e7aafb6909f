// Package bench holds gpuactor's benchmarks. The actor's costs are measured here with
// testing.B on every backend present (the simulator always; the GPU when there is one):
//
//	go test -run '^$' -bench . ./bench/
//
// Each GPU benchmark has a "direct" twin that makes the same runtime calls straight through
// the binding from one locked OS thread, with no actor in between: the ratio of the two is
// the actor's cost.
package bench
