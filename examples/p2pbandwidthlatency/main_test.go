package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
	"github.com/gpuactor/gpuactor/sim"
)

// simConfig runs the sample on a fresh simulated machine of n GPUs (every pair linked) with
// small copies.
func simConfig(n int) config {
	return config{numElems: 1 << 16, Flags: sample.Flags{Backend: "sim"}, sim: sim.New(sim.WithDevices(n))}
}

// The matrices' titles in the order the C sample prints them, without and with --p2p_read.
var (
	titles = []string{
		"Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)",
		"Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)",
		"Bidirectional P2P=Disabled Bandwidth Matrix (GB/s)",
		"Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)",
		"P2P=Disabled Latency Matrix (us)",
		"P2P=Enabled Latency (P2P Writes) Matrix (us)",
	}
	readTitles = []string{
		"Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)",
		"Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)",
		"Unidirectional P2P=Enabled Bandwidth (P2P Reads) Matrix (GB/s)",
		"Bidirectional P2P=Disabled Bandwidth Matrix (GB/s)",
		"Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)",
		"P2P=Disabled Latency Matrix (us)",
		"P2P=Enabled Latency (P2P Writes) Matrix (us)",
		"P2P=Enabled Latency (P2P Reads) Matrix (us)",
	}
)

// matrix reads an n×n matrix printed as the C sample prints it from lines: the corner and
// column numbers, then n rows of a row number and n values, each "%6.02f ".
func matrix(t *testing.T, lines []string, corner string, n int) []float64 {
	t.Helper()
	require.GreaterOrEqual(t, len(lines), n+1)
	var head strings.Builder
	head.WriteString(corner)
	for j := range n {
		fmt.Fprintf(&head, "%6d ", j)
	}
	require.Equal(t, head.String(), lines[0])
	// Each row is the C sample's "%6d " and a "%6.02f " a cell: a cell of 1000 or more (the
	// simulator's copies can be that fast) is wider, as printf makes it.
	cell := regexp.MustCompile(`^[0-9]+\.[0-9]{2}$`)
	var vals []float64
	for i := range n {
		row := lines[1+i]
		fields := strings.Fields(row)
		require.Len(t, fields, n+1, "row %d: %q", i, row)
		want := fmt.Sprintf("%6d ", i)
		for j, c := range fields[1:] {
			require.Regexp(t, cell, c, "cell (%d, %d) of %q", i, j, row)
			v, err := strconv.ParseFloat(c, 64)
			require.NoError(t, err)
			vals = append(vals, v)
			want += fmt.Sprintf("%6.02f ", v)
		}
		require.Equal(t, want, row, "row %d", i)
	}
	return vals
}

// checkOutput checks everything the sample printed for n GPUs: the header, the device lines,
// the access lines and note, the connectivity matrix, then each titled matrix in order, with
// positive finite values (bandwidths and GPU latencies; CPU latencies may round to 0.00), and
// the final note.
func checkOutput(t *testing.T, out string, n int, titles []string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Equal(t, "["+sampleName+"]", lines[0])
	for i := range n {
		assert.Equal(t, fmt.Sprintf("Device: %d, gpuactor simulator, pciBusID: %x, pciDeviceID: 0, pciDomainID:0", i, i+1), lines[1+i])
	}
	k := 1 + n
	for i := range n {
		for j := range n {
			if i != j {
				assert.Equal(t, fmt.Sprintf("Device=%d CAN Access Peer Device=%d", i, j), lines[k])
				k++
			}
		}
	}
	assert.Equal(t, []string{
		"",
		"***NOTE: In case a device doesn't have P2P access to other one, it falls back to normal memcopy procedure.",
		"So you can see lesser Bandwidth (GB/s) and unstable Latency (us) in those cases.",
		"",
		"P2P Connectivity Matrix",
	}, lines[k:k+5])
	k += 5
	head := "     D\\D"
	for j := range n {
		head += fmt.Sprintf("%6d", j)
	}
	assert.Equal(t, head, lines[k])
	for i := range n {
		assert.Equal(t, fmt.Sprintf("%6d\t", i)+strings.Repeat("     1", n), lines[k+1+i])
	}
	k += 1 + n

	for _, title := range titles {
		require.Equal(t, title, lines[k])
		k++
		latency := strings.HasSuffix(title, "(us)")
		corner := "   D\\D"
		if latency {
			corner = "   GPU"
		}
		for _, v := range matrix(t, lines[k:], corner, n) {
			assert.False(t, math.IsNaN(v) || math.IsInf(v, 0), "%s: %v", title, v)
			assert.Positive(t, v, title)
		}
		k += 1 + n
		if latency {
			require.Equal(t, "", lines[k])
			for _, v := range matrix(t, lines[k+1:], "   CPU", n) {
				assert.GreaterOrEqual(t, v, 0.0, title)
			}
			k += 2 + n
		}
	}
	assert.Equal(t, []string{"", "NOTE: The CUDA Samples are not meant for performance measurements. " +
		"Results may vary when GPU Boost is enabled."}, lines[k:])
}

// skipIfRace skips a test that runs the bidirectional matrices under the race detector. The
// C sample's bidirectional copies read and write the same buffers from two streams at once
// (each GPU's buffer is one copy's source and the other's destination): harmless on a GPU,
// whose figure is all that counts, but on the simulator, whose device memory is Go memory
// copied by a goroutine a stream, a data race. TestUnidirectionalMatrices covers the rest
// under the race detector.
func skipIfRace(t *testing.T) {
	if raceEnabled {
		t.Skip("the bidirectional matrices' concurrent copies of one buffer race on the simulator's memory")
	}
}

// TestRun runs the sample on simulated machines of one GPU (1×1 matrices, as the C sample
// prints them there), two and four, and checks every line.
func TestRun(t *testing.T) {
	skipIfRace(t)
	for _, n := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("%d devices", n), func(t *testing.T) {
			var out bytes.Buffer
			require.NoError(t, run(simConfig(n), &out))
			checkOutput(t, out.String(), n, titles)
		})
	}
}

// TestP2PReadAndSMCopy runs the P2P read matrices too, with the copies between GPUs made by
// the SM copy kernel, on four simulated GPUs.
func TestP2PReadAndSMCopy(t *testing.T) {
	skipIfRace(t)
	const n = 4
	c := simConfig(n)
	c.p2pRead, c.smCopy = true, true
	var out bytes.Buffer
	require.NoError(t, run(c, &out))
	checkOutput(t, out.String(), n, readTitles)
}

// TestUnidirectionalMatrices runs the unidirectional and latency matrices, writes and reads,
// with the copy engines and with the SM copy kernel, on four simulated GPUs: everything but
// the bidirectional matrices, race-free, so the race detector checks it too.
func TestUnidirectionalMatrices(t *testing.T) {
	ctx := context.Background()
	const n = 4
	for _, sm := range []bool{false, true} {
		b, _ := simBench(t, n, 4)
		b.smCopy = sm
		for _, method := range []transfer{p2pWrite, p2pRead} {
			var out bytes.Buffer
			require.NoError(t, b.bandwidthMatrix(ctx, &out, 1<<16, true, method))
			require.NoError(t, b.latencyMatrix(ctx, &out, true, method))
			lines := strings.Split(out.String(), "\n")
			// A rate printed with two decimals reads 0.00 when a loaded host stretches the
			// copies, so the bandwidth cells are held only to being read; the latencies,
			// which a loaded host lengthens, must be positive.
			for _, v := range matrix(t, lines, "   D\\D", n) {
				assert.GreaterOrEqual(t, v, 0.0)
			}
			for _, v := range matrix(t, lines[n+1:], "   GPU", n) {
				assert.Positive(t, v)
			}
			require.Equal(t, "", lines[2*(n+1)])
			matrix(t, lines[2*(n+1)+1:], "   CPU", n)
			require.Equal(t, []string{""}, lines[3*(n+1)+1:])
		}
	}
}

// TestBadNumElems: a non-positive --numElems is refused before anything is opened.
func TestBadNumElems(t *testing.T) {
	for _, n := range []int{0, -5} {
		c := simConfig(2)
		c.numElems = n
		var out bytes.Buffer
		err := run(c, &out)
		require.ErrorContains(t, err, fmt.Sprintf("--numElems=%d", n))
		assert.Empty(t, out.String())
	}
}

// TestHelp prints the C sample's help screen.
func TestHelp(t *testing.T) {
	var out bytes.Buffer
	printHelp(&out)
	assert.True(t, strings.HasPrefix(out.String(), "Usage:  p2pBandwidthLatencyTest [OPTION]...\n"+
		"Tests bandwidth/latency of GPU pairs using P2P and without P2P\n\nOptions:\n--help\t\tDisplay this help menu\n"))
	assert.Contains(t, out.String(), "--numElems=<NUM_OF_INT_ELEMS>  Number of integer elements to be used in p2p copy.\n")
}

// TestCopyShape checks the occupancy calculator's answer for a few devices: 2048 threads an
// SM hold two blocks of 1024; 1536 hold two of 768 rather than one of 1024.
func TestCopyShape(t *testing.T) {
	for _, tc := range []struct {
		sms, perSM, perBlock, warp int
		blocks, threads            uint32
	}{
		{132, 2048, 1024, 32, 264, 1024}, // H100 SXM
		{84, 1536, 1024, 32, 168, 768},   // sm_86
		{1, 1024, 1024, 32, 1, 1024},
		{0, 0, 0, 0, 1, 1}, // a device that reports nothing still launches
	} {
		p := device.Properties{MultiProcessors: tc.sms, MaxThreadsPerSM: tc.perSM, MaxThreadsPerBlock: tc.perBlock, WarpSize: tc.warp}
		blocks, threads := copyShape(p)
		assert.Equal(t, tc.blocks, blocks, "%+v", tc)
		assert.Equal(t, tc.threads, threads, "%+v", tc)
	}
}

// TestCFloat checks the C forms of the values Go prints otherwise.
func TestCFloat(t *testing.T) {
	assert.Equal(t, "12.35", cFloat(12.345678))
	assert.Equal(t, "0.00", cFloat(0))
	assert.Equal(t, "inf", cFloat(math.Inf(1)))
	assert.Equal(t, "-inf", cFloat(math.Inf(-1)))
	assert.Equal(t, "nan", cFloat(math.NaN()))
	assert.Equal(t, "-nan", cFloat(math.Copysign(math.NaN(), -1)))
}
