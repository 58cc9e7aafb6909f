package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeNvcc is an nvcc that records its arguments and writes, as the program -o names, a
// shell script printing simpleStreams' lines; its kernel time is 10, or 4 with
// CUDA_MODULE_LOADING=EAGER, and its memcopy time the run's number (1, 2, 3…, counted in a
// file beside it).
const fakeNvcc = `#!/bin/sh
[ "$1" = --version ] && { echo "fake nvcc"; exit 0; }
echo "$@" > "$(dirname "$0")/nvcc.args"
while [ $# -gt 0 ]; do
  if [ "$1" = -o ]; then out=$2; fi
  shift
done
cat > "$out" <<'PROG'
#!/bin/sh
n=$(cat "$0.count" 2>/dev/null || echo 0); n=$((n + 1)); echo $n > "$0.count"
k=10; [ "$CUDA_MODULE_LOADING" = EAGER ] && k=4
printf 'Starting Test\nmemcopy:\t%d.00\nkernel:\t\t%d.00\nnon-streamed:\t7.00\n4 streams:\t5.00\n' $n $k
PROG
chmod +x "$out"
`

// fakePort is the port: it insists on -backend cuda, prints its lines (with lines of its own,
// as the ports do) with memcopy 2.00 and kernel 5.00, and exits 1 with FAKE_FAIL set.
const fakePort = `#!/bin/sh
[ "$1" = -backend ] && [ "$2" = cuda ] || { echo "bad args: $*"; exit 3; }
printf 'device 0: fake (cuda backend)\nStarting Test\nmemcopy:\t2.00\nkernel:\t\t5.00\nnon-streamed:\t7.70\n4 streams:\t5.50\nPASS\n'
[ -n "$FAKE_FAIL" ] && exit 1
exit 0
`

// fixture lays out a samples checkout with simpleStreams' sources, a bin
// folder with simplestreams and devicequery (whose sample is absent), and nvcc (a script);
// it returns the samples, bin and nvcc paths.
func fixture(t *testing.T, nvcc string) (samples, bin, nvccPath string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fakes are shell scripts")
	}
	root := t.TempDir()
	samples = filepath.Join(root, "cuda-samples")
	for _, f := range []string{"Samples/0_Introduction/simpleStreams/simpleStreams.cu", "Common/helper_cuda.h"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(samples, f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(samples, f), []byte("// fake\n"), 0o644))
	}
	bin = filepath.Join(root, "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	for _, name := range []string{"simplestreams", "devicequery"} {
		require.NoError(t, os.WriteFile(filepath.Join(bin, name), []byte(fakePort), 0o755))
	}
	nvccPath = filepath.Join(root, "tools", "nvcc")
	require.NoError(t, os.MkdirAll(filepath.Dir(nvccPath), 0o755))
	require.NoError(t, os.WriteFile(nvccPath, []byte(nvcc), 0o755))
	return samples, bin, nvccPath
}

// TestRunFakes runs the whole harness on fake programs: it builds with the CMakeLists flags,
// runs each variant's programs alternately RUNS times with the variant's arguments and
// environment, keeps every output, and tabulates medians, spreads and ratios; ports without
// a binary or a sample are rows saying so.
func TestRunFakes(t *testing.T) {
	samples, bin, nvcc := fixture(t, fakeNvcc)
	keep := filepath.Join(t.TempDir(), "keep")
	outFile := filepath.Join(t.TempDir(), "table.md")
	var stdout, stderr bytes.Buffer
	err := run([]string{"-samples", samples, "-bin", bin, "-nvcc", nvcc, "-runs", "3",
		"-only", "simplestreams,devicequery,asyncapi", "-keep", keep, "-out", outFile}, &stdout, &stderr)
	require.NoError(t, err, stderr.String())
	table := stdout.String()
	assert.Contains(t, table, "```\n")
	assert.Contains(t, table, "fake nvcc\n")

	args, err := os.ReadFile(filepath.Join(filepath.Dir(nvcc), "nvcc.args"))
	require.NoError(t, err)
	for _, want := range []string{"-O3", "-rdc=true", "-lineinfo", "--extended-lambda", "-arch=native",
		"-I" + filepath.Join(samples, "Common"), "simpleStreams/simpleStreams.cu"} {
		assert.Contains(t, string(args), want)
	}

	// The C program's memcopy is 1, 2, 3 over the default variant's runs (median 2, spread
	// 1–3), the port's 2 each time: a ratio of 1.00. The count goes on over the variants.
	assert.Contains(t, table, "| simplestreams | PASS ×3 | PASS ×3 | yes | memcopy (ms) | 2.00 (1.00–3.00) | 2.00 (2.00–2.00) | 1.00 |")
	assert.Contains(t, table, "| | | | | kernel (ms) | 10.00 (10.00–10.00) | 5.00 (5.00–5.00) | 0.50 |")
	assert.Contains(t, table, "| simplestreams (use_cuda_malloc_host) | PASS ×3 | PASS ×3 | yes | memcopy (ms) | 5.00 (4.00–6.00) |")
	assert.Contains(t, table, "| simplestreams (CUDA_MODULE_LOADING=EAGER) | PASS ×3 | PASS ×3 | yes | memcopy (ms) | 8.00 (7.00–9.00) |")
	assert.Contains(t, table, "| | | | | kernel (ms) | 4.00 (4.00–4.00) | 5.00 (5.00–5.00) | 1.25 |")
	assert.Contains(t, table, "| | | | | streamed (ms) | 5.00 (5.00–5.00) | 5.50 (5.50–5.50) | 1.10 |")
	assert.Contains(t, table, "| devicequery | — | — | — | skipped: no sample file "+filepath.Join("Samples", "1_Utilities", "deviceQuery", "deviceQuery.cpp"))
	assert.Contains(t, table, "| asyncapi | — | — | — | skipped: no port binary "+filepath.Join(bin, "asyncapi"))
	assert.NotContains(t, table, "Result lines that differ")
	assert.Less(t, strings.Index(table, "| asyncapi"), strings.Index(table, "| simplestreams"), "the table's order")

	written, err := os.ReadFile(outFile)
	require.NoError(t, err)
	assert.Equal(t, table, string(written))
	kept, err := os.ReadFile(filepath.Join(keep, "table.md"))
	require.NoError(t, err)
	assert.Equal(t, table, string(kept))
	for _, f := range []string{"build.log", "runs.tsv", "c-1.txt", "go-3.txt", "c-use_cuda_malloc_host-2.txt", "go-CUDA_MODULE_LOADING_EAGER-3.txt"} {
		assert.FileExists(t, filepath.Join(keep, "simplestreams", f))
	}
	c1, err := os.ReadFile(filepath.Join(keep, "simplestreams", "c-1.txt"))
	require.NoError(t, err)
	assert.Contains(t, string(c1), "memcopy:\t1.00")
	tsv, err := os.ReadFile(filepath.Join(keep, "simplestreams", "runs.tsv"))
	require.NoError(t, err)
	assert.Equal(t, 1+3*3*2, strings.Count(string(tsv), "\n"), "a header and a line per run")
	assert.Contains(t, stderr.String(), "simplestreams (use_cuda_malloc_host): go run 2 of 3")

	// The kept folder makes the same table again, with nothing run.
	var again bytes.Buffer
	require.NoError(t, run([]string{"-report", keep, "-only", "simplestreams,devicequery,asyncapi"}, &again, &stderr))
	assert.Equal(t, table, again.String())
}

// TestRunFailures: a port that exits 1 is FAIL, not the same as C's PASS, and the
// differences are listed; a build that fails skips its port with the log's path.
func TestRunFailures(t *testing.T) {
	samples, bin, nvcc := fixture(t, fakeNvcc)
	t.Setenv("FAKE_FAIL", "1")
	var stdout, stderr bytes.Buffer
	require.NoError(t, run([]string{"-samples", samples, "-bin", bin, "-nvcc", nvcc, "-runs", "1", "-only", "simplestreams"}, &stdout, &stderr))
	assert.Contains(t, stdout.String(), "| simplestreams | PASS ×1 | FAIL ×1 | no | memcopy (ms)")
	assert.Contains(t, stdout.String(), "## Result lines that differ\n\n### simplestreams\n\nGo run 1: FAIL, C run 1: PASS\n")

	samples, bin, nvcc = fixture(t, "#!/bin/sh\necho 'simpleStreams.cu(1): error: no GPU here' >&2\nexit 1\n")
	keep := t.TempDir()
	stdout.Reset()
	require.NoError(t, run([]string{"-samples", samples, "-bin", bin, "-nvcc", nvcc, "-only", "simplestreams", "-keep", keep}, &stdout, &stderr))
	assert.Contains(t, stdout.String(), "| simplestreams | — | — | — | skipped: building simpleStreams failed (exit status 1): see "+filepath.Join(keep, "simplestreams", "build.log"))
	log, err := os.ReadFile(filepath.Join(keep, "simplestreams", "build.log"))
	require.NoError(t, err)
	assert.Contains(t, string(log), "error: no GPU here")
}

// TestRunTimeout: a run past -timeout is killed, with the processes it started, and is an
// ERROR in the table; the harness goes on.
func TestRunTimeout(t *testing.T) {
	samples, bin, nvcc := fixture(t, fakeNvcc)
	// The port starts a child that would outlive it and keep its output open.
	require.NoError(t, os.WriteFile(filepath.Join(bin, "simplestreams"), []byte("#!/bin/sh\nsleep 60 &\nsleep 60\n"), 0o755))
	var stdout, stderr bytes.Buffer
	require.NoError(t, run([]string{"-samples", samples, "-bin", bin, "-nvcc", nvcc, "-runs", "1", "-only", "simplestreams", "-timeout", "500ms"}, &stdout, &stderr))
	assert.Contains(t, stdout.String(), "| simplestreams | PASS ×1 | ERROR: timed out after 500ms ×1 | no |")
}

// TestRunBadFlags refuses a missing -samples or -bin, a bad -runs, a -samples that is no
// folder and unknown ports, naming what was wrong.
func TestRunBadFlags(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-bin", dir}, "-samples and -bin are required"},
		{[]string{"-samples", dir}, "-samples and -bin are required"},
		{[]string{"-samples", dir, "-bin", dir, "-runs", "0"}, "-runs 0"},
		{[]string{"-samples", filepath.Join(dir, "none"), "-bin", dir}, "not a folder"},
		{[]string{"-samples", dir, "-bin", dir, "-only", "nosuch"}, "unknown port(s) nosuch"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(tc.args, &stdout, &stderr)
		require.Error(t, err, tc.args)
		assert.Contains(t, err.Error(), tc.want, tc.args)
		assert.Empty(t, stdout.String())
	}
}
