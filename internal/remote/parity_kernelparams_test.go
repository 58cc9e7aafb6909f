//go:build linux

package remote_test

import (
	"slices"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// Parity step of reading a kernel node back (backend.GraphKernelParamsDevice), on the graph
// BuildGraph made, after ReadGraph.
func init() {
	step := struct {
		name   string
		covers []string
		run    func(dv backend.Device, st *pstate) (any, error)
	}{"GraphKernelNodeGetParams", []string{"GraphKernelNodeGetParams"}, func(dv backend.Device, st *pstate) (any, error) {
		p, err := dv.GraphKernelNodeGetParams(st.kn)
		if err != nil {
			return nil, err
		}
		_, wrong := dv.GraphKernelNodeGetParams(st.set)
		// The kernel handle is the device's own: only whether it names the kernel must agree.
		return []any{p.Grid, p.Block, p.SharedMem, p.Kernel == st.k, errText(wrong)}, nil
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
