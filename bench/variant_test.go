package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
)

func TestWaiterQueryFlag(t *testing.T) {
	o, err := parseFlags([]string{"-waiter-query", "off,on"})
	require.NoError(t, err)
	assert.Equal(t, []device.WaiterQuery{device.WaiterQueryOff, device.WaiterQueryOn}, o.variants())
	assert.Equal(t, "@waiter-query=on", o.suffixFor(device.WaiterQueryOn))

	o, err = parseFlags([]string{"-waiter-query", "on"})
	require.NoError(t, err)
	assert.Empty(t, o.suffixFor(device.WaiterQueryOn), "one setting: names unchanged")

	o, err = parseFlags(nil)
	require.NoError(t, err)
	assert.Equal(t, []device.WaiterQuery{device.WaiterQueryDefault}, o.variants())

	for _, bad := range []string{"maybe", "on,on", "on,"} {
		_, err := parseFlags([]string{"-waiter-query", bad})
		assert.ErrorContains(t, err, "-waiter-query", bad)
	}
	_, err = parseFlags([]string{"-waiter-query", "off,on", "-inprocess"})
	assert.ErrorContains(t, err, "not for -inprocess")
}

// TestWaiterQueryVariantsRunBoth: with two settings each row runs once per setting, named
// with its suffix, and compared with the C++ row of its base name.
func TestWaiterQueryVariantsRunBoth(t *testing.T) {
	o, err := parseFlags([]string{"-backend", "sim", "-scenarios", "launch_roundtrip", "-repeat", "1", "-waiter-query", "off,on"})
	require.NoError(t, err)
	rep := &Report{}
	require.NoError(t, runBackend(t.Context(), o, device.BackendSim, 0, rep))
	require.Empty(t, rep.Errors)
	var names []string
	for _, r := range rep.Results {
		names = append(names, r.Scenario)
	}
	assert.Equal(t, []string{"launch_roundtrip@waiter-query=off", "launch_roundtrip@waiter-query=on"}, names)
	assert.Equal(t, refOf("launch_roundtrip"), refOf(names[1]))
}
