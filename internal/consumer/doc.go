// Package consumer uses gpuactor as a module outside it would: only the public API, at the
// release its go.mod requires (its go.work gives it this tree). Its tests check that what a
// user can reach is the library's API and nothing else — the misuses the library once allowed
// no longer compile — and that depending on gpuactor brings no heavy modules along. It runs on
// the simulator.
package consumer
