//go:build linux

package remote_test

import (
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Parity steps of graph topology, instantiation with parameters and graph memory: each builds
// its own graph, so they run after the others.
func init() {
	paritySteps = append(paritySteps, graphGSteps...)
}

var graphGSteps = []struct {
	name   string
	covers []string
	run    func(dv backend.Device, st *pstate) (any, error)
}{
	{"GraphTopology", []string{"GraphNodeDependencies", "GraphNodeDependents", "GraphRemoveDependencies", "GraphDestroyNode", "GraphNodeFindInClone"}, func(dv backend.Device, st *pstate) (any, error) {
		g, err := dv.GraphCreate()
		if err != nil {
			return nil, err
		}
		defer dv.GraphDestroy(g)
		a, err := dv.GraphAddEmptyNode(g, nil)
		if err != nil {
			return nil, err
		}
		b, err := dv.GraphAddEmptyNode(g, []backend.GraphNode{a})
		if err != nil {
			return nil, err
		}
		c, err := dv.GraphAddEmptyNode(g, []backend.GraphNode{a, b})
		if err != nil {
			return nil, err
		}
		deps, err := dv.GraphNodeDependencies(c)
		if err != nil {
			return nil, err
		}
		dependents, err := dv.GraphNodeDependents(a)
		if err != nil {
			return nil, err
		}
		clone, err := dv.GraphClone(g)
		if err != nil {
			return nil, err
		}
		defer dv.GraphDestroy(clone)
		found, err := dv.GraphNodeFindInClone(clone, b)
		if err != nil {
			return nil, err
		}
		if err := dv.GraphRemoveDependencies(g, []backend.GraphNode{a}, []backend.GraphNode{c}); err != nil {
			return nil, err
		}
		missing := errText(dv.GraphRemoveDependencies(g, []backend.GraphNode{a}, []backend.GraphNode{c}))
		if err := dv.GraphDestroyNode(b); err != nil {
			return nil, err
		}
		twice := errText(dv.GraphDestroyNode(b))
		from, to, err := dv.GraphEdges(g)
		return []any{deps, dependents, found, missing, twice, from, to}, err
	}},
	{"GraphInstantiateParams", []string{"GraphInstantiateWithParams", "GraphExecFlags", "GraphNodeEnabled", "GraphDebugDotFlags"}, func(dv backend.Device, st *pstate) (any, error) {
		s, err := dv.StreamCreate(backend.StreamNonBlocking, 0)
		if err != nil {
			return nil, err
		}
		defer dv.StreamDestroy(s)
		p, err := dv.Malloc(64)
		if err != nil {
			return nil, err
		}
		defer dv.Free(p)
		g, err := dv.GraphCreate()
		if err != nil {
			return nil, err
		}
		defer dv.GraphDestroy(g)
		set, err := dv.GraphAddMemsetNode(g, nil, p, 7, 64)
		if err != nil {
			return nil, err
		}
		e, err := dv.EventCreate(backend.EventDefault)
		if err != nil {
			return nil, err
		}
		defer dv.EventDestroy(e)
		rec, err := dv.GraphAddEventRecordNode(g, []backend.GraphNode{set}, e)
		badInfo := backend.InstantiateInfo{}
		var badErr string
		if err == nil {
			var x backend.GraphExec
			x, badInfo, err = dv.GraphInstantiateWithParams(g, backend.InstantiateDeviceLaunch, 0)
			badErr = errText(err)
			badInfo.ErrorNode = backend.GraphNode(boolInt(badInfo.ErrorNode == rec))
			if x != 0 {
				_ = dv.GraphExecDestroy(x)
			}
			if err := dv.GraphDestroyNode(rec); err != nil {
				return nil, err
			}
		}
		x, info, err := dv.GraphInstantiateWithParams(g, backend.InstantiateUpload|backend.InstantiateAutoFreeOnLaunch, s)
		if err != nil {
			return info, err
		}
		defer dv.GraphExecDestroy(x)
		flags, err := dv.GraphExecFlags(x)
		if err != nil {
			return nil, err
		}
		if err := dv.GraphNodeSetEnabled(x, set, false); err != nil {
			return nil, err
		}
		on, err := dv.GraphNodeEnabled(x, set)
		if err != nil {
			return nil, err
		}
		badDot := errText(dv.GraphDebugDotFlags(g, st.dot, 1<<30))
		return []any{badInfo, badErr, info, flags, on, badDot}, dv.GraphDebugDotFlags(g, st.dot, backend.DotVerbose)
	}},
	{"GraphMemory", []string{"GraphMemTrim", "GraphMemAttribute", "SetGraphMemAttribute"}, func(dv backend.Device, st *pstate) (any, error) {
		if err := dv.GraphMemTrim(); err != nil {
			return nil, err
		}
		var v []uint64
		for _, a := range []backend.GraphMemAttr{backend.GraphMemUsedCurrent, backend.GraphMemUsedHigh, backend.GraphMemReservedCurrent, backend.GraphMemReservedHigh} {
			x, err := dv.GraphMemAttribute(a)
			if err != nil {
				return nil, err
			}
			v = append(v, x)
		}
		bad := []string{errText(dv.SetGraphMemAttribute(backend.GraphMemUsedCurrent, 0)), errText(dv.SetGraphMemAttribute(backend.GraphMemUsedHigh, 5))}
		_, err := dv.GraphMemAttribute(99)
		bad = append(bad, errText(err))
		return []any{v, bad}, dv.SetGraphMemAttribute(backend.GraphMemReservedHigh, 0)
	}},
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// User objects cannot be made on an isolated device (their destructor is a parent closure);
// the calls on one fail alike in both, and a graph's references cross as numbers.
func init() {
	refusedRemotely["UserObjectCreate"] = struct {
		why string
		run func(dv backend.Device) error
	}{"the destructor is a closure of the parent", func(dv backend.Device) error {
		_, err := dv.UserObjectCreate(func() {})
		return err
	}}
	paritySteps = append(paritySteps, struct {
		name   string
		covers []string
		run    func(dv backend.Device, st *pstate) (any, error)
	}{"UserObjectsOfNothing", []string{"UserObjectRetain", "UserObjectRelease", "GraphRetainUserObject", "GraphReleaseUserObject"}, func(dv backend.Device, st *pstate) (any, error) {
		g, err := dv.GraphCreate()
		if err != nil {
			return nil, err
		}
		defer dv.GraphDestroy(g)
		return []string{errText(dv.UserObjectRetain(0x42, 1)), errText(dv.UserObjectRelease(0x42, 1)),
			errText(dv.GraphRetainUserObject(g, 0x42, 1, true)), errText(dv.GraphReleaseUserObject(g, 0x42, 1)),
			errText(dv.UserObjectRetain(0x42, 0))}, nil
	}})
}
