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
