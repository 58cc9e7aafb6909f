//go:build linux

package remote_test

import (
	"slices"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// Parity step of the external semaphore nodes (backend.GraphExternalSemaphoreDevice): the
// simulator has no external semaphores and refuses every call, the same through the worker.
func init() {
	step := struct {
		name   string
		covers []string
		run    func(dv backend.Device, st *pstate) (any, error)
	}{"GraphExternalSemaphoreNodes", []string{"GraphAddExternalSemaphoresSignalNode", "GraphAddExternalSemaphoresWaitNode",
		"GraphExternalSemaphoresSignalNodeGetParams", "GraphExternalSemaphoresSignalNodeSetParams",
		"GraphExternalSemaphoresWaitNodeGetParams", "GraphExternalSemaphoresWaitNodeSetParams",
		"GraphExecExternalSemaphoresSignalNodeSetParams", "GraphExecExternalSemaphoresWaitNodeSetParams"},
		func(dv backend.Device, st *pstate) (any, error) {
			ops := []backend.SemaphoreOp{{Sem: 0x1000, Value: 3}}
			_, e1 := dv.GraphAddExternalSemaphoresSignalNode(st.g, nil, ops)
			_, e2 := dv.GraphAddExternalSemaphoresWaitNode(st.g, nil, ops)
			_, e3 := dv.GraphExternalSemaphoresSignalNodeGetParams(st.kn)
			_, e4 := dv.GraphExternalSemaphoresWaitNodeGetParams(st.kn)
			e5 := dv.GraphExternalSemaphoresSignalNodeSetParams(st.kn, ops)
			e6 := dv.GraphExternalSemaphoresWaitNodeSetParams(st.kn, ops)
			e7 := dv.GraphExecExternalSemaphoresSignalNodeSetParams(st.x, st.kn, ops)
			e8 := dv.GraphExecExternalSemaphoresWaitNodeSetParams(st.x, st.kn, ops)
			var out []string
			for _, err := range []error{e1, e2, e3, e4, e5, e6, e7, e8} {
				if err == nil {
					out = append(out, "accepted")
					continue
				}
				out = append(out, errText(err))
			}
			return out, nil
		}}
	i := slices.IndexFunc(paritySteps, func(s struct {
		name   string
		covers []string
		run    func(dv backend.Device, st *pstate) (any, error)
	}) bool {
		return s.name == "ReadGraph"
	})
	paritySteps = slices.Insert(paritySteps, i+1, step)
}
