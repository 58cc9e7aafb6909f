//go:build linux

package remote_test

import (
	"errors"
	"time"
	"unsafe"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// collSettle polls c's async error until it is no longer in progress (the simulator's ranks
// join in the background), for at most ten seconds.
func collSettle(dv backend.Device, c backend.Comm) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := dv.CollCommAsyncError(c)
		if !errors.Is(err, backend.ErrCollInProgress) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(time.Millisecond)
	}
}

// collCode is a CollError's code, or -1 for an error of another type: a step returns it so
// that an error that lost its type on the wire fails the comparison.
func collCode(err error) int32 {
	if ce, ok := errors.AsType[*backend.CollError](err); ok {
		return ce.Code
	}
	return -1
}

// The collective steps: a one-rank communicator on each side (its ids differ, each naming
// its own process's root, so a step returns only facts about them), a grouped launch of
// every kind of operation read back through host memory, bad input, a split, finalize and
// destroy, and an abort of a communicator still waiting for its second rank. They make and
// free their own memory and streams.
func init() {
	type step = struct {
		name   string
		covers []string
		run    func(dv backend.Device, st *pstate) (any, error)
	}
	paritySteps = append(paritySteps,
		step{"CollVersion", []string{"CollVersion"}, func(dv backend.Device, st *pstate) (any, error) { return dv.CollVersion() }},
		step{"Collectives", []string{"CollUniqueID", "CollCommInitRank", "CollCommAsyncError", "CollCommInfo", "CollLaunch", "CollCommSplit", "CollCommFinalize", "CollCommDestroy"}, func(dv backend.Device, st *pstate) (any, error) {
			id, err := dv.CollUniqueID()
			if err != nil {
				return nil, err
			}
			cfg := backend.CommConfig{Blocking: true, CGAClusterSize: 2, MinCTAs: 1, MaxCTAs: 4, NetName: "Socket", SplitShare: true}
			c, err := dv.CollCommInitRank(1, id, 0, cfg)
			if err != nil {
				return nil, err
			}
			if err := collSettle(dv, c); err != nil {
				return nil, err
			}
			count, rank, _, err := dv.CollCommInfo(c)
			if err != nil {
				return nil, err
			}
			const n = 1024 // int32s: four slices of 256
			p, err := dv.Malloc(4 * n)
			if err != nil {
				return nil, err
			}
			defer dv.Free(p)
			hp, err := dv.HostAlloc(4*n, 0)
			if err != nil {
				return nil, err
			}
			defer dv.HostFree(hp)
			s, err := dv.StreamCreate(backend.StreamNonBlocking, 0)
			if err != nil {
				return nil, err
			}
			defer dv.StreamDestroy(s)
			host := unsafe.Slice((*int32)(hp), n)
			for i := range host {
				host[i] = int32(i - 300)
			}
			if err := dv.CopyHtoD(p, hp, 4*n, s); err != nil {
				return nil, err
			}
			at := func(i int) backend.DevicePtr { return p + backend.DevicePtr(4*256*i) }
			ops := []backend.CollOp{ // slice 0 in, slices 1..3 out
				{Kind: backend.CollAllReduce, Send: at(0), Recv: at(1), Count: 100, Type: backend.CollInt32, Op: backend.CollMax},
				{Kind: backend.CollRecv, Recv: at(2), Count: 50, Type: backend.CollInt32, Peer: 0},
				{Kind: backend.CollSend, Send: at(0) + 4, Count: 50, Type: backend.CollInt32, Peer: 0},
				{Kind: backend.CollAllGather, Send: at(0) + 8, Recv: at(3), Count: 20, Type: backend.CollFloat32},
			}
			if err := dv.CollLaunch(c, s, ops); err != nil {
				return nil, err
			}
			badRoot := dv.CollLaunch(c, s, []backend.CollOp{{Kind: backend.CollBroadcast, Send: at(0), Recv: at(0), Count: 1, Type: backend.CollInt8, Peer: 1}})
			if err := dv.StreamSynchronize(s); err != nil {
				return nil, err
			}
			clear(host)
			if err := dv.CopyDtoH(hp, p, 4*n, s); err != nil {
				return nil, err
			}
			if err := dv.StreamSynchronize(s); err != nil {
				return nil, err
			}
			out := append([]int32(nil), host...)

			sub, err := dv.CollCommSplit(c, 3, 0, cfg)
			if err != nil {
				return nil, err
			}
			subErr := collSettle(dv, sub)
			subCount, subRank, _, subInfo := dv.CollCommInfo(sub)
			none, noneErr := dv.CollCommSplit(c, backend.SplitNoColor, 0, cfg)
			if err := dv.CollCommDestroy(sub); err != nil {
				return nil, err
			}
			if err := dv.CollCommFinalize(c); err != nil {
				return nil, err
			}
			if err := collSettle(dv, c); err != nil {
				return nil, err
			}
			gone := dv.CollCommDestroy(c)
			after := dv.CollCommAsyncError(c)
			return []any{
				[8]byte(id[:8]), [2]int{count, rank}, out,
				collCode(badRoot), errText(badRoot),
				errText(subErr), [2]int{subCount, subRank}, errText(subInfo), none, errText(noneErr),
				errText(gone), collCode(after), errText(after),
			}, nil
		}},
		step{"CollAbort", []string{"CollCommAbort"}, func(dv backend.Device, st *pstate) (any, error) {
			id, err := dv.CollUniqueID()
			if err != nil {
				return nil, err
			}
			c, err := dv.CollCommInitRank(2, id, 0, backend.CommConfig{})
			if err != nil {
				return nil, err
			}
			joining := dv.CollCommAsyncError(c) // rank 1 never comes
			_, _, _, early := dv.CollCommInfo(c)
			if err := dv.CollCommAbort(c); err != nil {
				return nil, err
			}
			after := dv.CollCommAsyncError(c)
			return []any{errors.Is(joining, backend.ErrCollInProgress), collCode(early), errText(early), collCode(after), errText(after)}, nil
		}},
		step{"CollBadInput", nil, func(dv backend.Device, st *pstate) (any, error) {
			_, garbage := dv.CollCommInitRank(2, backend.CommID{9}, 0, backend.CommConfig{})
			_, badRank := dv.CollCommInitRank(2, backend.CommID{}, 5, backend.CommConfig{})
			unknown := dv.CollLaunch(0x77, 0, []backend.CollOp{{Kind: backend.CollAllReduce}})
			// The config's fields reach the worker: its refusal names them.
			id, err := dv.CollUniqueID()
			if err != nil {
				return nil, err
			}
			_, cfg := dv.CollCommInitRank(1, id, 0, backend.CommConfig{CGAClusterSize: -3, MinCTAs: 2, MaxCTAs: 7, NetName: "IB"})
			_, order := dv.CollCommInitRank(1, id, 0, backend.CommConfig{MinCTAs: 9, MaxCTAs: 4})
			return []any{collCode(garbage), collCode(badRank), collCode(unknown), errText(unknown), errText(cfg), errText(order)}, garbage
		}},
	)
}
