// Package nilsafe holds the test that every method of the public handle types (streams,
// events, graphs, memory, modules, kernels) answers a nil receiver with an error, never a
// panic: a nil handle is a caller's mistake like any other bad argument.
package nilsafe
