package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExternalArgsCarryGraphSizes: the C++ baseline and the peers get the graph rows' node
// counts, and every C++ row the planned rows are shown against, once.
func TestExternalArgsCarryGraphSizes(t *testing.T) {
	o, err := parseFlags([]string{"-scenarios", "graph_node,graph_node_launchn,stream_launch_8,launch_roundtrip", "-graph-sizes", "1,10", "-repeat", "3"})
	require.NoError(t, err)
	args := externalArgs(o)
	assert.Equal(t, []string{"--scenarios", "graph_node,launch_roundtrip,roundtrip_query_loop,roundtrip_event_sync,roundtrip_event_sync_other,launch_threads_8", "--sizes", joinSizes(o.sizes),
		"--repeat", "3", "--device", "0", "--graph-sizes", "1,10"}, args)

	o, err = parseFlags([]string{"-scenarios", "launch_enqueue"})
	require.NoError(t, err)
	assert.NotContains(t, externalArgs(o), "--graph-sizes", "no -graph-sizes: the programs' own default, every size")
}

func python(t *testing.T) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	t.Setenv("PYTHONDONTWRITEBYTECODE", "1") // no __pycache__ left in bench/peers
	return py
}

// TestPeersParseTheRunnersArgs: peers.py accepts every flag the runner passes it, without
// CuPy or cuda.core installed, and names a bad one.
func TestPeersParseTheRunnersArgs(t *testing.T) {
	py := python(t)
	o, err := parseFlags([]string{"-scenarios", "graph_node,launch_roundtrip,h2d_pinned", "-graph-sizes", "1,100", "-sizes", "4K,1M", "-repeat", "5", "-device", "1"})
	require.NoError(t, err)
	dir := filepath.Join(repoRoot(), "bench", "peers")
	const show = `import json, sys
sys.path.insert(0, sys.argv[1])
import peers
a = peers.parse_args(sys.argv[2:])
print(json.dumps({"graph_sizes": a.graph_sizes, "sizes": a.sizes, "repeat": a.repeat, "device": a.device, "wanted": sorted(a.wanted)}))`
	out, err := exec.Command(py, append([]string{"-c", show, dir}, externalArgs(o)...)...).Output()
	require.NoError(t, err, "%s", exitStderr(err))
	var got struct {
		GraphSizes []int64  `json:"graph_sizes"`
		Sizes      []int64  `json:"sizes"`
		Repeat     int      `json:"repeat"`
		Device     int      `json:"device"`
		Wanted     []string `json:"wanted"`
	}
	require.NoError(t, json.Unmarshal(out, &got), "%s", out)
	assert.Equal(t, []int64{1, 100}, got.GraphSizes)
	assert.Equal(t, []int64{4096, 1 << 20}, got.Sizes)
	assert.Equal(t, 5, got.Repeat)
	assert.Equal(t, 1, got.Device)
	assert.Equal(t, []string{"graph_node", "h2d_pinned", "launch_roundtrip", "roundtrip_event_sync", "roundtrip_event_sync_other", "roundtrip_query_loop"}, got.Wanted, "the C++ rows, probes included: the peers skip those they lack")

	for _, bad := range [][]string{{"--graph-sizes", "0"}, {"--graph-sizes", "1,x"}, {"--repeat", "0"}, {"--warp", "9"}} {
		cmd := exec.Command(py, append([]string{filepath.Join(dir, "peers.py")}, bad...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit, "%v", bad)
		assert.Equal(t, 2, exit.ExitCode(), "%v: bad flags exit 2", bad)
		assert.Contains(t, stderr.String(), strings.TrimPrefix(bad[0], "--"), "%v: the message names the flag", bad)
	}
}

func exitStderr(err error) string {
	var exit *exec.ExitError
	if err != nil && errors.As(err, &exit) {
		return string(exit.Stderr)
	}
	return ""
}

// TestPeersRunInEveryPass: the peers run after the C++ baseline in every pass, with its flags,
// and their results carry the pass, so that each can be divided by its own pass's C++ figure.
func TestPeersRunInEveryPass(t *testing.T) {
	python(t)
	dir := t.TempDir()
	cpp := filepath.Join(dir, "suite")
	require.NoError(t, os.WriteFile(cpp, []byte(`#!/bin/sh
echo '{"kind":"result","impl":"cpp","scenario":"launch_roundtrip","unit":"us","value":8,"p99":10,"repeats":1,"checked":true}'
`), 0o755))
	peers := filepath.Join(dir, "peers.py")
	// It answers only when given the graph sizes, as the runner must pass them.
	require.NoError(t, os.WriteFile(peers, []byte(`import sys
if "--graph-sizes" in sys.argv and "--scenarios" in sys.argv:
    print('{"kind":"result","impl":"cupy","scenario":"launch_roundtrip","unit":"us","value":9,"p99":11,"repeats":1,"checked":true}')
`), 0o644))
	o, err := parseFlags([]string{"-scenarios", "launch_roundtrip", "-graph-sizes", "1", "-rounds", "2", "-cbaseline", cpp})
	require.NoError(t, err)
	o.peersScript = peers
	rep := &Report{}
	for pass := 1; pass <= o.rounds+1; pass++ {
		runExternal(t.Context(), o, rep, pass)
	}
	require.Empty(t, rep.Errors)
	var cppPasses, peerPasses []int
	for _, r := range rep.Results {
		switch r.Impl {
		case "cpp":
			cppPasses = append(cppPasses, r.Pass)
		case "cupy":
			peerPasses = append(peerPasses, r.Pass)
		}
	}
	assert.Equal(t, []int{1, 2, 3}, cppPasses)
	assert.Equal(t, []int{1, 2, 3}, peerPasses, "the peers ran in every pass, with the graph sizes")

	o.peers = false
	rep = &Report{}
	runExternal(t.Context(), o, rep, 1)
	require.Len(t, rep.Results, 1, "-peers=false: the C++ baseline alone")
	assert.Equal(t, "cpp", rep.Results[0].Impl)
}

// TestPeersUnitTests runs peers.py's own tests of its flags (bench/peers/test_peers.py).
func TestPeersUnitTests(t *testing.T) {
	py := python(t)
	cmd := exec.Command(py, "-m", "unittest", "discover", "-s", filepath.Join(repoRoot(), "bench", "peers"))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "OK")
}
