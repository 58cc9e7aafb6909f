package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// byName finds a port of the table.
func byName(t *testing.T, name string) port {
	t.Helper()
	for _, p := range ports {
		if p.name == name {
			return p
		}
	}
	require.FailNow(t, "no port "+name)
	return port{}
}

// Outputs as the C samples print them (written from their printf calls) and as the ports do.
const (
	simpleStreamsC = "[ simpleStreams ]\n\nDevice synchronization method set to = 0 (Automatic Blocking)\n" +
		"Setting reps to 100 to demonstrate steady state\n\n> GPU Device 0: \"Hopper\" with compute capability 9.0\n\n" +
		"Device: <NVIDIA H100 80GB HBM3> canMapHostMemory: Yes\n> CUDA Capable: SM 9.0 hardware\n" +
		"> 132 Multiprocessor(s) x 128 (Cores/Multiprocessor) = 16896 (Cores)\n> scale_factor = 1.0000\n" +
		"> array_size   = 16777216\n\n> Using CPU/GPU Device Synchronization method (cudaDeviceScheduleAuto)\n" +
		"> mmap() allocating 64.00 Mbytes (generic page-aligned system memory)\n" +
		"> cudaHostRegister() registering 64.00 Mbytes of generic allocated system memory\n\n" +
		"Starting Test\nmemcopy:\t5.04\nkernel:\t\t3.10\nnon-streamed:\t7.85\n4 streams:\t5.22\n-------------------------------\n"
	asyncAPIC = "[./asyncAPI] - Starting...\nGPU Device 0: \"Hopper\" with compute capability 9.0\n\n" +
		"CUDA device [NVIDIA H100 80GB HBM3]\ntime spent executing by the GPU: 11.43\n" +
		"time spent by CPU in CUDA calls: 0.03\nCPU executed 57735 iterations while waiting for GPU to finish\n"
	asyncAPIGo = "device 0: NVIDIA H100 80GB HBM3 (cuda backend)\ntime spent executing by the GPU: 11.402 ms\n" +
		"time spent by CPU in gpuactor calls: 0.051 ms\nCPU executed 41000 iterations while waiting for GPU to finish\n" +
		"verified 16777216 elements\nPASS\n"
	simpleMultiGPUC = "Starting simpleMultiGPU\nCUDA-capable device count: 2\nGenerating input data...\n\n" +
		"Computing with 2 GPUs...\n  GPU Processing time: 21.123000 (ms)\n\nComputing with Host CPU...\n\n" +
		"Comparing GPU and Host CPU results...\n  GPU sum: 16777296.000000\n  CPU sum: 16777294.395033\n" +
		"  Relative difference: 9.566307E-08 \n\n"
	simpleP2PC = "[./simpleP2P] - Starting...\nChecking for multiple GPUs...\nCUDA-capable device count: 2\n\n" +
		"Checking GPU(s) for support of peer to peer memory access...\n" +
		"> Peer access from NVIDIA H200 (GPU0) -> NVIDIA H200 (GPU1) : Yes\n" +
		"> Peer access from NVIDIA H200 (GPU1) -> NVIDIA H200 (GPU0) : Yes\n" +
		"Enabling peer access between GPU0 and GPU1...\nAllocating buffers (64MB on GPU0, GPU1 and CPU Host)...\n" +
		"Creating event handles...\ncudaMemcpyPeer / cudaMemcpy between GPU0 and GPU1: 123.45GB/s\n" +
		"Preparing host buffer and memcpy to GPU0...\nRun kernel on GPU1, taking source data from GPU0 and writing to GPU1...\n" +
		"Run kernel on GPU0, taking source data from GPU1 and writing to GPU0...\n" +
		"Copy data back to host from GPU0 and verify results...\nDisabling peer access...\nShutting down...\nTest passed\n"
	streamOrderedC = "GPU Device 0: \"Hopper\" with compute capability 9.0\n\nStarting basicStreamOrderedAllocation()\n" +
		"> Checking the results from vectorAddGPU() ...\nbasicStreamOrderedAllocation PASSED\n" +
		"Starting streamOrderedAllocationPostSync()\nTotal elapsed time = 19.876543 ms over 20 iterations\n" +
		"> Checking the results from vectorAddGPU() ...\nstreamOrderedAllocationPostSync PASSED\n"
	// p2pBandwidthLatencyTest on two GPUs (1.5: every value of the P2P=Disabled matrices,
	// which the timings must skip).
	p2pBandwidthC = "[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]\n" +
		"Device: 0, NVIDIA H200, pciBusID: 18, pciDeviceID: 0, pciDomainID:0\n" +
		"Device: 1, NVIDIA H200, pciBusID: 2a, pciDeviceID: 0, pciDomainID:0\n" +
		"Device=0 CAN Access Peer Device=1\nDevice=1 CAN Access Peer Device=0\n\n" +
		"***NOTE: In case a device doesn't have P2P access to other one, it falls back to normal memcopy procedure.\n" +
		"So you can see lesser Bandwidth (GB/s) and unstable Latency (us) in those cases.\n\n" +
		"P2P Connectivity Matrix\n     D\\D     0     1\n     0\t     1     1\n     1\t     1     1\n" +
		"Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)\n   D\\D     0      1 \n     0   1.50   1.50 \n     1   1.50   1.50 \n" +
		"Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)\n   D\\D     0      1 \n     0 1520.25 370.12 \n     1 369.50 1519.75 \n" +
		"Bidirectional P2P=Disabled Bandwidth Matrix (GB/s)\n   D\\D     0      1 \n     0   1.50   1.50 \n     1   1.50   1.50 \n" +
		"Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)\n   D\\D     0      1 \n     0 1600.00 720.40 \n     1 721.10 1601.30 \n" +
		"P2P=Disabled Latency Matrix (us)\n   GPU     0      1 \n     0   1.50   1.50 \n     1   1.50   1.50 \n\n" +
		"   CPU     0      1 \n     0   1.50   1.50 \n     1   1.50   1.50 \n" +
		"P2P=Enabled Latency (P2P Writes) Matrix (us)\n   GPU     0      1 \n     0   2.10   2.75 \n     1   2.80   2.05 \n\n" +
		"   CPU     0      1 \n     0   2.40   3.10 \n     1   3.20   2.30 \n\n" +
		"NOTE: The CUDA Samples are not meant for performance measurements. Results may vary when GPU Boost is enabled.\n"
	// The same on one GPU: 1×1 matrices.
	p2pBandwidth1C = "[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]\n" +
		"Device: 0, NVIDIA H100 80GB HBM3, pciBusID: 18, pciDeviceID: 0, pciDomainID:0\n\n" +
		"***NOTE: In case a device doesn't have P2P access to other one, it falls back to normal memcopy procedure.\n" +
		"So you can see lesser Bandwidth (GB/s) and unstable Latency (us) in those cases.\n\n" +
		"P2P Connectivity Matrix\n     D\\D     0\n     0\t     1\n" +
		"Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)\n   D\\D     0 \n     0   1.50 \n" +
		"Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)\n   D\\D     0 \n     0 1290.50 \n" +
		"Bidirectional P2P=Disabled Bandwidth Matrix (GB/s)\n   D\\D     0 \n     0   1.50 \n" +
		"Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)\n   D\\D     0 \n     0 1310.25 \n" +
		"P2P=Disabled Latency Matrix (us)\n   GPU     0 \n     0   1.50 \n\n   CPU     0 \n     0   1.50 \n" +
		"P2P=Enabled Latency (P2P Writes) Matrix (us)\n   GPU     0 \n     0   2.05 \n\n   CPU     0 \n     0   2.30 \n\n" +
		"NOTE: The CUDA Samples are not meant for performance measurements. Results may vary when GPU Boost is enabled.\n"
	deviceQueryC = "./deviceQuery Starting...\n\n CUDA Device Query (Runtime API) version (CUDART static linking)\n\n" +
		"Detected 1 CUDA Capable device(s)\n\nDevice 0: \"NVIDIA H100 80GB HBM3\"\n" +
		"  CUDA Driver Version / Runtime Version          13.0 / 13.0\n" +
		"  CUDA Capability Major/Minor version number:    9.0\n" +
		"  Total amount of global memory:                 81079 MBytes (85017755648 bytes)\n" +
		"  Compute Mode:\n     < Default (multiple host threads can use ::cudaSetDevice() with device simultaneously) >\n\n" +
		"deviceQuery, CUDA Driver = CUDART, CUDA Driver Version = 13.0, CUDA Runtime Version = 13.0, NumDevs = 1\nResult = PASS\n"
)

// TestParseTimings reads every timing of samples that print some, from C's output and the
// port's (whose lines may differ in units and names: asyncapi).
func TestParseTimings(t *testing.T) {
	for _, tc := range []struct {
		port, output string
		want         map[string]float64
	}{
		{"simplestreams", simpleStreamsC, map[string]float64{"memcopy": 5.04, "kernel": 3.10, "non-streamed": 7.85, "streamed": 5.22}},
		{"asyncapi", asyncAPIC, map[string]float64{"GPU time": 11.43, "CPU time in calls": 0.03, "CPU iterations while waiting": 57735}},
		{"asyncapi", asyncAPIGo, map[string]float64{"GPU time": 11.402, "CPU time in calls": 0.051, "CPU iterations while waiting": 41000}},
		{"simplemultigpu", simpleMultiGPUC, map[string]float64{"GPU processing": 21.123}},
		{"simplep2p", simpleP2PC, map[string]float64{"cudaMemcpyPeer bandwidth": 123.45}},
		{"streamorderedallocation", streamOrderedC, map[string]float64{"total, 20 iterations": 19.876543}},
		{"devicequery", deviceQueryC, map[string]float64{}},
		// Every cell of the P2P=Enabled matrices, not of the P2P=Disabled ones printed alike
		// before them, nor of a latency matrix's CPU block (2.40 3.10 / 3.20 2.30).
		{"p2pbandwidthlatency", p2pBandwidthC, map[string]float64{
			"unidirectional P2P writes 0-0": 1520.25, "unidirectional P2P writes 0-1": 370.12,
			"unidirectional P2P writes 1-0": 369.50, "unidirectional P2P writes 1-1": 1519.75,
			"bidirectional P2P 0-0": 1600, "bidirectional P2P 0-1": 720.40,
			"bidirectional P2P 1-0": 721.10, "bidirectional P2P 1-1": 1601.30,
			"GPU latency P2P writes 0-0": 2.10, "GPU latency P2P writes 0-1": 2.75,
			"GPU latency P2P writes 1-0": 2.80, "GPU latency P2P writes 1-1": 2.05,
		}},
		// One GPU: no cell beside GPU 1.
		{"p2pbandwidthlatency", p2pBandwidth1C, map[string]float64{
			"unidirectional P2P writes 0-0": 1290.50, "bidirectional P2P 0-0": 1310.25, "GPU latency P2P writes 0-0": 2.05,
		}},
	} {
		_, got := parse(byName(t, tc.port), tc.output)
		assert.Equal(t, tc.want, got, tc.port)
	}
}

// TestParseResults picks the result lines and only those.
func TestParseResults(t *testing.T) {
	for _, tc := range []struct {
		port, output string
		want         []string
	}{
		{"simplemultigpu", simpleMultiGPUC, []string{"CUDA-capable device count: 2", "  GPU sum: 16777296.000000", "  CPU sum: 16777294.395033"}},
		{"simplep2p", simpleP2PC, []string{
			"CUDA-capable device count: 2",
			"> Peer access from NVIDIA H200 (GPU0) -> NVIDIA H200 (GPU1) : Yes",
			"> Peer access from NVIDIA H200 (GPU1) -> NVIDIA H200 (GPU0) : Yes",
			"Test passed",
		}},
		{"streamorderedallocation", streamOrderedC, []string{"basicStreamOrderedAllocation PASSED", "streamOrderedAllocationPostSync PASSED"}},
		{"simplecallback", "Starting simpleCallback\nFound 1 CUDA capable GPUs\nStarting 8 heterogeneous computing workloads\n" +
			"Total of 8 workloads finished:\nSuccess\n", []string{"Total of 8 workloads finished:", "Success"}},
		{"graphmemorynodes", "Running negateSquares in an explicitly constructed graph.\n" +
			"Check verified that d_negSquare and d_input share a virtual address.\n" +
			"Validating negateSquares in an explicitly constructed graph...\nValidation PASSED!\n\n",
			[]string{"Check verified that d_negSquare and d_input share a virtual address.", "Validation PASSED!"}},
		{"simplecudagraphs", "16777216 elements\n\nNum of nodes in the graph created manually = 7\n" +
			"[cudaGraphsManual] Host callback final reduced sum = 0.996214\nCloned Graph Output.. \n" +
			"[cudaGraphsManual] Host callback final reduced sum = 0.996214\n",
			[]string{"Num of nodes in the graph created manually = 7",
				"[cudaGraphsManual] Host callback final reduced sum = 0.996214",
				"[cudaGraphsManual] Host callback final reduced sum = 0.996214"}},
		{"devicequery", deviceQueryC, []string{
			"Detected 1 CUDA Capable device(s)",
			"Device 0: \"NVIDIA H100 80GB HBM3\"",
			"  CUDA Driver Version / Runtime Version          13.0 / 13.0",
			"  CUDA Capability Major/Minor version number:    9.0",
			"  Total amount of global memory:                 81079 MBytes (85017755648 bytes)",
			"  Compute Mode:",
			"     < Default (multiple host threads can use ::cudaSetDevice() with device simultaneously) >",
			"deviceQuery, CUDA Driver = CUDART, CUDA Driver Version = 13.0, CUDA Runtime Version = 13.0, NumDevs = 1",
			"Result = PASS",
		}},
		// The processes print in any order: the lines are sorted.
		{"simpleipc", "PP: lshmName = simpleIPCshm\nProcess 1: Starting on device 1...\nProcess 0: Starting on device 0...\n" +
			"Process 1: verifying...\nProcess 1 complete!\r\nProcess 0: verifying...\nProcess 0 complete!\n",
			[]string{"Process 0 complete!", "Process 1 complete!"}},
		{"asyncapi", asyncAPIC, nil},
		// The structure: devices, access, connectivity, each matrix's title and columns.
		{"p2pbandwidthlatency", p2pBandwidth1C, []string{
			"Device: 0, NVIDIA H100 80GB HBM3, pciBusID: 18, pciDeviceID: 0, pciDomainID:0",
			"P2P Connectivity Matrix", "     D\\D     0", "     0\t     1",
			"Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)", "   D\\D     0 ",
			"Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)", "   D\\D     0 ",
			"Bidirectional P2P=Disabled Bandwidth Matrix (GB/s)", "   D\\D     0 ",
			"Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)", "   D\\D     0 ",
			"P2P=Disabled Latency Matrix (us)", "   GPU     0 ", "   CPU     0 ",
			"P2P=Enabled Latency (P2P Writes) Matrix (us)", "   GPU     0 ", "   CPU     0 ",
			"NOTE: The CUDA Samples are not meant for performance measurements. Results may vary when GPU Boost is enabled.",
		}},
	} {
		got, _ := parse(byName(t, tc.port), tc.output)
		assert.Equal(t, tc.want, got, tc.port)
	}
}

// TestParseBadNumbers: a timing whose number does not parse is absent, not zero, and the
// first value of a line printed twice counts.
func TestParseBadNumbers(t *testing.T) {
	_, got := parse(byName(t, "simplestreams"), "memcopy:\t1.2.3\nkernel:\t\t2.5\nkernel:\t\t9.9\n")
	assert.Equal(t, map[string]float64{"kernel": 2.5}, got)
}

// TestPortsTable checks the table's entries are complete: a sample, sources, flags and at
// least one variant each, and unique names.
func TestPortsTable(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range ports {
		assert.False(t, seen[p.name], "%s twice", p.name)
		seen[p.name] = true
		assert.NotEmpty(t, p.sample, p.name)
		assert.NotEmpty(t, p.exe, p.name)
		assert.NotEmpty(t, p.sources, p.name)
		assert.NotEmpty(t, p.flags, p.name)
		assert.NotEmpty(t, p.variants, p.name)
		names := map[string]bool{}
		for _, tm := range p.timings {
			assert.Equal(t, 1, tm.re.NumSubexp(), "%s %s: one capture group", p.name, tm.name)
			names[tm.name] = true
		}
		for name := range p.after {
			assert.True(t, names[name], "%s: after names %q, not one of its timings", p.name, name)
		}
	}
	for _, n := range []string{"asyncapi", "simpleoccupancy", "simplestreams", "simplecallback", "streamorderedallocation", "simplecudagraphs",
		"graphmemorynodes", "graphconditionalnodes", "simplezerocopy", "simplemultigpu", "devicequery", "simplep2p", "simpleipc", "p2pbandwidthlatency"} {
		assert.True(t, seen[n], n)
	}
}

// TestSummarize checks the median of odd and even counts and the spread.
func TestSummarize(t *testing.T) {
	assert.Equal(t, spread{n: 3, median: 2, min: 1, max: 5}, summarize([]float64{5, 1, 2}))
	assert.Equal(t, spread{n: 4, median: 2.5, min: 1, max: 9}, summarize([]float64{9, 1, 2, 3}))
	assert.Equal(t, spread{}, summarize(nil))
}

// TestChoose checks -only: the table's order, spaces and empty names ignored, unknown names
// refused by name.
func TestChoose(t *testing.T) {
	got, err := choose(" simplep2p, asyncapi,,")
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, "asyncapi", got[0].name)
	assert.Equal(t, "simplep2p", got[1].name)
	all, err := choose("")
	require.NoError(t, err)
	assert.Len(t, all, len(ports))
	_, err = choose("asyncapi,nosuch")
	require.ErrorContains(t, err, "nosuch")
}
