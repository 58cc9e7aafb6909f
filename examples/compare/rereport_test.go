package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// keptRun lays out a folder as -keep leaves it: the machine, and p2pbandwidthlatency's
// runs.tsv with one run of each program in the default variant and the outputs it names.
func keptRun(t *testing.T, runsTSV string) string {
	t.Helper()
	dir := t.TempDir()
	port := filepath.Join(dir, "p2pbandwidthlatency")
	require.NoError(t, os.MkdirAll(port, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, machineFile), []byte("0, NVIDIA H200\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(port, "runs.tsv"), []byte(runsTSV), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(port, "c-1.txt"), []byte(p2pBandwidthC), 0o644))
	goOut := strings.Replace(p2pBandwidthC, "     0   2.10   2.75 ", "     0   2.10   5.50 ", 1) // Go: 2× C at 0-1
	require.NoError(t, os.WriteFile(filepath.Join(port, "go-1.txt"), []byte(goOut), 0o644))
	return dir
}

const keptTSV = "variant\tprogram\trun\tstatus\tseconds\toutput\n\tc\t1\tPASS\t2.5\tc-1.txt\n\tgo\t1\tPASS\t2.4\tgo-1.txt\n"

// TestReportFromKeptRuns writes the table again from a kept folder, with nothing to run: no
// samples, no binaries, no nvcc.
func TestReportFromKeptRuns(t *testing.T) {
	dir := keptRun(t, keptTSV)
	outFile := filepath.Join(t.TempDir(), "table.md")
	var stdout, stderr bytes.Buffer
	require.NoError(t, run([]string{"-report", dir, "-out", outFile}, &stdout, &stderr), stderr.String())
	table := stdout.String()
	assert.Contains(t, table, "1 run(s) of each")
	assert.Contains(t, table, "0, NVIDIA H200")
	assert.Contains(t, table, "| p2pbandwidthlatency | PASS ×1 | PASS ×1 | yes | unidirectional P2P writes 0-0 (GB/s) | 1520 (1520–1520) | 1520 (1520–1520) | 1.00 (higher is better) |")
	assert.Contains(t, table, "| p2pbandwidthlatency: GPU latency P2P writes (us) | 4 | 1.00–2.00 | 0-1: 2.00 | 1.00 |")
	written, err := os.ReadFile(outFile)
	require.NoError(t, err)
	assert.Equal(t, table, string(written))
}

func TestReportFromKeptRunsRefusesBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		args func(dir string) []string
		tsv  string
		want string
	}{
		{"nothing kept", func(string) []string { return []string{"-report", t.TempDir()} }, keptTSV, "no runs of the chosen ports there"},
		{"other flags", func(dir string) []string { return []string{"-report", dir, "-samples", dir} }, keptTSV, "-report takes only -only and -out"},
		{"unknown port", func(dir string) []string { return []string{"-report", dir, "-only", "nosuch"} }, keptTSV, "unknown port(s) nosuch"},
		{"short line", func(dir string) []string { return []string{"-report", dir} }, "variant\tprogram\n\tc\t1\tPASS\t2.5\n", "line 2: 5 fields, want 6"},
		{"bad run", func(dir string) []string { return []string{"-report", dir} }, "h\n\tc\tone\tPASS\t2.5\tc-1.txt\n", `line 2: run "one"`},
		{"unknown variant", func(dir string) []string { return []string{"-report", dir} }, "h\nfast\tc\t1\tPASS\t2.5\tc-1.txt\n", `p2pbandwidthlatency has no variant "fast"`},
		{"unknown program", func(dir string) []string { return []string{"-report", dir} }, "h\n\trust\t1\tPASS\t2.5\tc-1.txt\n", `program "rust", want c or go`},
		{"missing output", func(dir string) []string { return []string{"-report", dir} }, "h\n\tc\t1\tPASS\t2.5\tc-9.txt\n", "c-9.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := keptRun(t, tc.tsv)
			var stdout, stderr bytes.Buffer
			err := run(tc.args(dir), &stdout, &stderr)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Empty(t, stdout.String(), "no table on an error")
		})
	}
}
