package main

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/streams"
)

// submitterNames is every submitter row's name.
func submitterNames() []string {
	var names []string
	for _, s := range submitterScenarios() {
		names = append(names, s.name)
	}
	return names
}

// The submitter rows run only when named, each held to the C++ row of its goroutine count.
func TestSubmitterRowsAreOptIn(t *testing.T) {
	o, err := parseFlags(nil)
	require.NoError(t, err)
	for _, task := range plan(o) {
		assert.False(t, task.s.optIn, "%s runs by default", task.s.name)
	}
	o, err = parseFlags([]string{"-scenarios", "stream_launch_8," + strings.Join(submitterNames(), ",")})
	require.NoError(t, err)
	refs := map[string]string{}
	for _, task := range plan(o) {
		refs[task.s.name] = task.s.refName()
	}
	assert.Equal(t, map[string]string{
		"stream_launch_8": "launch_threads_8", "stream_launch_8_k2": "launch_threads_8", "stream_launch_8_k4": "launch_threads_8",
		"stream_launch_8_k8": "launch_threads_8", "stream_launch_64_k4": "launch_threads_64", "stream_launch_64_k8": "launch_threads_64",
		"launch_roundtrip_k4": "launch_roundtrip", "binding_launch_threads_8": "launch_threads_8", "binding_launch_threads_64": "launch_threads_64",
	}, refs)
	args := externalArgs(o)
	require.Equal(t, "--scenarios", args[0])
	for _, ref := range []string{"launch_threads_8", "launch_threads_64", "launch_roundtrip"} {
		assert.Contains(t, strings.Split(args[1], ","), ref, "the C++ rows they are held to run")
	}
}

// TestSubmitterRowsRunOnTheSimulator runs the rows as the suite does: each passes its check
// that every handle completed its streams' launches, and the env's device works afterwards.
func TestSubmitterRowsRunOnTheSimulator(t *testing.T) {
	o, err := parseFlags([]string{"-backend", "sim", "-repeat", "1", "-scenarios", strings.Join(submitterNames(), ",")})
	require.NoError(t, err)
	rep := &Report{}
	require.NoError(t, runBackend(t.Context(), o, device.BackendSim, 0, rep))
	require.Empty(t, rep.Errors)
	got := map[string]bool{}
	for _, r := range rep.Results {
		assert.True(t, r.Checked, r.Scenario)
		assert.Positive(t, r.Value, r.Scenario)
		got[r.Scenario] = true
	}
	for _, n := range submitterNames() {
		assert.True(t, got[n], n)
	}
}

// openSubmitters gives k distinct handles of the env's device, the env's own first; closing
// them closes the extra ones only, and the env's device goes on working.
func TestOpenSubmittersClosesOnlyTheExtraHandles(t *testing.T) {
	ctx := t.Context()
	o, err := parseFlags([]string{"-backend", "sim", "-repeat", "1"})
	require.NoError(t, err)
	e, closeEnv, err := openEnv(ctx, o, device.BackendSim, device.WaiterQueryDefault, &Report{})
	require.NoError(t, err)
	defer closeEnv()

	_, _, err = e.openSubmitters(0)
	require.ErrorContains(t, err, "at least one submitter")

	subs, closeSubs, err := e.openSubmitters(3)
	require.NoError(t, err)
	require.Len(t, subs, 3)
	assert.Same(t, e.dev, subs[0].dev)
	assert.Same(t, e.empty, subs[0].empty)
	for i, s := range subs {
		assert.Equal(t, e.dev.Ordinal(), s.dev.Ordinal(), "handle %d", i)
		for _, other := range subs[:i] {
			assert.NotSame(t, other.dev, s.dev, "handle %d", i)
		}
		require.NoError(t, streams.Default(s.dev).Launch(ctx, s.empty, one).Wait(ctx), "handle %d", i)
	}
	require.NoError(t, closeSubs())
	for i, s := range subs[1:] {
		err := streams.Default(s.dev).Launch(ctx, s.empty, one).Wait(ctx)
		assert.ErrorIs(t, err, device.ErrClosed, "extra handle %d", i+1)
	}
	require.NoError(t, streams.Default(e.dev).Launch(ctx, e.empty, one).Wait(ctx), "the env's own device")
	require.NoError(t, e.dev.Synchronize(context.Background()))
}

// A thread of binding_launch_threads_N that cannot open its direct device fails the row with
// the reason, and every other thread, opened or not, ends with it.
func TestBindingLaunchThreadsFailsWhenAThreadCannotOpen(t *testing.T) {
	var calls atomic.Int32
	e := &env{ctx: t.Context(), binding: func() (*direct, error) {
		if calls.Add(1) == 3 {
			return nil, errors.New("no binding on this thread")
		}
		return openDirect(device.BackendSim, 0)
	}}
	_, _, err := bindingLaunchThreads(8)(e, 0, 1)
	require.ErrorContains(t, err, "no binding on this thread")
	assert.Equal(t, int32(8), calls.Load(), "every thread tried")

	e.binding = func() (*direct, error) { return openDirect(device.BackendSim, 0) }
	v, _, err := bindingLaunchThreads(8)(e, 0, 1)
	require.NoError(t, err)
	assert.Positive(t, v)
}
