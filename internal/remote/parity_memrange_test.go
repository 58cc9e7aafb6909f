//go:build linux

package remote_test

import "github.com/gpuactor/gpuactor/internal/backend"

// The managed-memory range steps: advice to every kind of location on part of an
// allocation, read back for the part and for the whole, and a bad location. They make and
// free their own memory, so they run after the teardown as well as anywhere.
func init() {
	paritySteps = append(paritySteps,
		struct {
			name   string
			covers []string
			run    func(dv backend.Device, st *pstate) (any, error)
		}{"MemRangeInfo", []string{"MemRangeInfo"}, func(dv backend.Device, st *pstate) (any, error) {
			m, err := dv.MallocManaged(3*4096, backend.AttachGlobal)
			if err != nil {
				return nil, err
			}
			defer dv.Free(m)
			for _, a := range []struct {
				advice backend.Advice
				loc    backend.Location
			}{
				{backend.AdviseSetReadMostly, backend.Location{}},
				{backend.AdviseSetPreferredLocation, backend.Location{Type: backend.LocationHostNUMA}},
				{backend.AdviseSetAccessedBy, backend.Location{Type: backend.LocationDevice}},
				{backend.AdviseSetAccessedBy, backend.Location{Type: backend.LocationHost}},
			} {
				if err := dv.MemAdvise(m, 4096, a.advice, a.loc); err != nil {
					return nil, err
				}
			}
			part, err := dv.MemRangeInfo(m, 4096, 4)
			if err != nil {
				return nil, err
			}
			whole, err := dv.MemRangeInfo(m, 3*4096, 4)
			if err != nil {
				return nil, err
			}
			bad := dv.MemAdvise(m, 4096, backend.AdviseSetAccessedBy, backend.Location{Type: backend.LocationHostNUMACurrent})
			return []any{part, whole, errText(bad)}, nil
		}},
		struct {
			name   string
			covers []string
			run    func(dv backend.Device, st *pstate) (any, error)
		}{"MemRangeInfoOfNothing", nil, func(dv backend.Device, st *pstate) (any, error) {
			return dv.MemRangeInfo(0x5, 16, 4)
		}},
	)
}
