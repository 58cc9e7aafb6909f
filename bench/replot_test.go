package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPlotsFromCommittedResults redraws the committed GPU run's plots into a temp dir: the
// plotting code works on real results, and REPLOT=dir rewrites a results folder's plots.
func TestPlotsFromCommittedResults(t *testing.T) {
	dirs, _ := filepath.Glob("results/*/results.json")
	if len(dirs) == 0 {
		t.Skip("no committed results")
	}
	for _, f := range dirs {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		var rep Report
		require.NoError(t, json.Unmarshal(b, &rep))
		out := t.TempDir()
		if dir := os.Getenv("REPLOT"); dir != "" && filepath.Dir(f) == filepath.Clean(dir) {
			out = dir
		}
		require.NoError(t, plots(out, &rep))
		for _, name := range []string{"bandwidth.svg", "launch.svg"} {
			st, err := os.Stat(filepath.Join(out, name))
			require.NoError(t, err)
			require.Greater(t, st.Size(), int64(1000))
		}
	}
}

// A run of -scenarios without copy rows (the graph rows alone, say) saves its results: it
// gets the launch plot and no bandwidth plot, where the log axis once panicked on no data.
func TestPlotsWithoutCopyRows(t *testing.T) {
	rep := Report{Meta: Meta{GPU: "test GPU", Backends: []string{"cuda"}}, Results: []Result{
		{Impl: "gpuactor", Backend: "cuda", Scenario: "graph_node", Size: 1, Unit: "us/node", Value: 2, Checked: true},
		{Impl: "cpp", Backend: "cuda", Scenario: "graph_node", Size: 1, Unit: "us/node", Value: 1.9, Checked: true},
	}}
	out := t.TempDir()
	require.NoError(t, plots(out, &rep))
	_, err := os.Stat(filepath.Join(out, "bandwidth.svg"))
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = os.Stat(filepath.Join(out, "launch.svg"))
	require.NoError(t, err)
}
