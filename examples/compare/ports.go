package main

import (
	"fmt"
	"regexp"
)

// port is what the harness knows of one port and the NVIDIA sample it ports: where the
// sample lives, how its CMakeLists.txt builds it, how each program runs, and which of the
// lines both print are results (to be equal) and which are timings (to be compared).
type port struct {
	name    string   // the port's folder under examples/, and its binary's name in -bin
	sample  string   // the C sample's folder, relative to the checkout's Samples/
	exe     string   // the C program's name
	sources []string // the files nvcc compiles, relative to the sample's folder
	flags   []string // nvcc's flags but -I and -o
	libs    []string // what nvcc links besides the CUDA runtime
	// variants are the ways both programs run: each gets its own rows in the table.
	variants []variant
	// results are the patterns of the lines both print that must be equal; with sortResults
	// their order does not matter (processes printing concurrently).
	results     []*regexp.Regexp
	sortResults bool
	timings     []timing
	// after maps a timing's name to the line it follows: its re is matched only after the
	// first line after matches, for a figure of one table among several printed alike.
	after map[string]*regexp.Regexp
	// matrices are square tables of figures both print, one per pair of devices: every cell
	// is compared, in a table of its own beside the main one.
	matrices []matrix
}

// matrix is a table of figures, one per pair of devices (row i, column j), printed after a
// title line as a header line then one line per row: the row's number and its values. Only
// the first block after the title is read (a latency matrix's GPU block, not its CPU one).
type matrix struct {
	name  string
	unit  string // as timing's
	title *regexp.Regexp
}

// cellName is the timing name of matrix m's cell (i, j) in an outcome's timings.
func (m matrix) cellName(i, j int) string { return fmt.Sprintf("%s %d-%d", m.name, i, j) }

// variant is one way of running both programs: extra arguments and environment.
type variant struct {
	label  string   // "" for the default run
	env    []string // KEY=VALUE added to both programs' environment
	cArgs  []string // the C sample's extra arguments
	goArgs []string // the port's, after -backend cuda
}

// timing is one number both programs print: the first capture group of re.
type timing struct {
	name string
	unit string // "ms", "GB/s" (higher is better), "count"
	re   *regexp.Regexp
}

// The nvcc flags the samples' CMakeLists.txt ask for: CUDA_SEPARABLE_COMPILATION ON (-rdc),
// -lineinfo unless ENABLE_CUDA_DEBUG, --extended-lambda for CUDA sources, C++17; -O3 and
// -arch=native stand for a release build for the GPU at hand.
var cudaFlags = []string{"-O3", "-rdc=true", "-lineinfo", "--extended-lambda", "-arch=native", "-std=c++17", "-Wno-deprecated-gpu-targets"}

// eager runs both programs with CUDA's modules loaded when the context is created rather
// than on a kernel's first launch, which the C samples' timers would otherwise cover.
var eager = variant{label: "CUDA_MODULE_LOADING=EAGER", env: []string{"CUDA_MODULE_LOADING=EAGER"}}

func re(s string) *regexp.Regexp { return regexp.MustCompile(s) }

// ports are the ports the harness knows, in the order of its table.
var ports = []port{
	{
		name: "asyncapi", sample: "0_Introduction/asyncAPI", exe: "asyncAPI",
		sources: []string{"asyncAPI.cu"}, flags: cudaFlags,
		variants: []variant{{}, eager},
		timings: []timing{
			{"GPU time", "ms", re(`^time spent executing by the GPU: ([0-9.]+)`)},
			{"CPU time in calls", "ms", re(`^time spent by CPU in (?:CUDA|gpuactor) calls: ([0-9.]+)`)},
			{"CPU iterations while waiting", "count", re(`^CPU executed ([0-9]+) iterations while waiting`)},
		},
	},
	{
		// The potential occupancies and the suggested block and grid sizes are results: the
		// port's calculator must agree with the runtime's on the same GPU.
		name: "simpleoccupancy", sample: "0_Introduction/simpleOccupancy", exe: "simpleOccupancy",
		sources: []string{"simpleOccupancy.cu"}, flags: cudaFlags,
		variants: []variant{{}},
		results: []*regexp.Regexp{
			re(`^Suggested block size: [0-9]+$`),
			re(`^Minimum grid size for maximum occupancy: [0-9]+$`),
			re(`^Potential occupancy: [0-9.e+]+%$`),
			re(`^Test PASSED$`),
			re(`^element [0-9]+ expected`),
		},
		timings: []timing{
			{"manual, 32 threads", "ms", re(`^Elapsed time: ([0-9.e+-]+)ms$`)},
			{"occupancy-based", "ms", re(`^Elapsed time: ([0-9.e+-]+)ms$`)},
		},
		after: map[string]*regexp.Regexp{
			"manual, 32 threads": re(`^\[ Manual configuration`),
			"occupancy-based":    re(`^\[ Automatic, occupancy-based configuration \]$`),
		},
	},
	{
		name: "simplestreams", sample: "0_Introduction/simpleStreams", exe: "simpleStreams",
		sources: []string{"simpleStreams.cu"}, flags: cudaFlags,
		variants: []variant{
			{},
			{label: "use_cuda_malloc_host", cArgs: []string{"--use_cuda_malloc_host"}, goArgs: []string{"-use_cuda_malloc_host"}},
			eager,
		},
		timings: []timing{
			{"memcopy", "ms", re(`^memcopy:\s+([0-9.]+)`)},
			{"kernel", "ms", re(`^kernel:\s+([0-9.]+)`)},
			{"non-streamed", "ms", re(`^non-streamed:\s+([0-9.]+)`)},
			{"streamed", "ms", re(`^[0-9]+ streams:\s+([0-9.]+)`)},
		},
	},
	{
		name: "simplecallback", sample: "0_Introduction/simpleCallback", exe: "simpleCallback",
		sources: []string{"simpleCallback.cu", "multithreading.cpp"}, flags: cudaFlags, libs: []string{"-lpthread"},
		variants: []variant{{}},
		results:  []*regexp.Regexp{re(`^Total of [0-9]+ workloads finished:$`), re(`^(Success|Failure)$`)},
	},
	{
		name: "streamorderedallocation", sample: "2_Concepts_and_Techniques/streamOrderedAllocation", exe: "streamOrderedAllocation",
		sources: []string{"streamOrderedAllocation.cu"}, flags: cudaFlags,
		variants: []variant{{}},
		results:  []*regexp.Regexp{re(`^\S+ PASSED$`), re(`FAILED`)},
		timings:  []timing{{"total, 20 iterations", "ms", re(`^Total elapsed time = ([0-9.]+) ms`)}},
	},
	{
		name: "simplecudagraphs", sample: "3_CUDA_Features/simpleCudaGraphs", exe: "simpleCudaGraphs",
		sources: []string{"simpleCudaGraphs.cu"}, flags: cudaFlags,
		variants: []variant{{}},
		results: []*regexp.Regexp{
			re(`^Num of nodes in the graph created .* = [0-9]+$`),
			re(`Host callback final reduced sum = `),
		},
	},
	{
		name: "graphmemorynodes", sample: "3_CUDA_Features/graphMemoryNodes", exe: "graphMemoryNodes",
		sources: []string{"graphMemoryNodes.cu"}, flags: cudaFlags,
		variants: []variant{{}},
		results: []*regexp.Regexp{
			re(`^Validation (PASSED|FAILURE)!$`),
			re(`^Check verified that d_negSquare and d_input share a virtual address\.$`),
		},
	},
	{
		// Every line the kernels and the host print is a result: the order the conditional
		// nodes ran in is the sample's whole output.
		name: "graphconditionalnodes", sample: "3_CUDA_Features/graphConditionalNodes", exe: "graphConditionalNodes",
		sources: []string{"graphConditionalNodes.cu"}, flags: cudaFlags,
		variants: []variant{{}},
		results: []*regexp.Regexp{
			re(`^(GPU|Host): `),
			re(`: (Building graph\.\.\.|Complete)$`),
			re(`^Skipping execution`),
		},
	},
	{
		name: "simplezerocopy", sample: "0_Introduction/simpleZeroCopy", exe: "simpleZeroCopy",
		sources: []string{"simpleZeroCopy.cu"}, flags: cudaFlags,
		variants: []variant{
			{},
			{label: "use_generic_memory", cArgs: []string{"--use_generic_memory"}, goArgs: []string{"-use_generic_memory"}},
		},
	},
	{
		name: "simplemultigpu", sample: "0_Introduction/simpleMultiGPU", exe: "simpleMultiGPU",
		sources: []string{"simpleMultiGPU.cu"}, flags: cudaFlags,
		variants: []variant{{}, eager},
		results:  []*regexp.Regexp{re(`^CUDA-capable device count: [0-9]+$`), re(`^  (GPU|CPU) sum: `)},
		timings:  []timing{{"GPU processing", "ms", re(`^  GPU Processing time: ([0-9.]+) \(ms\)`)}},
	},
	{
		// deviceQuery.cpp is host code: CMake compiles it with the C++ compiler, so none of
		// the CUDA flags apply.
		name: "devicequery", sample: "1_Utilities/deviceQuery", exe: "deviceQuery",
		sources: []string{"deviceQuery.cpp"}, flags: []string{"-O3", "-std=c++17"},
		variants: []variant{{}},
		// Every line but the first (the program's path) and the blank ones.
		results: []*regexp.Regexp{re(`^(Detected|There are no|Device [0-9]+:|  |> Peer access|deviceQuery, |Result = |MapSMtoCores)`)},
	},
	{
		name: "simplep2p", sample: "0_Introduction/simpleP2P", exe: "simpleP2P",
		sources: []string{"simpleP2P.cu"}, flags: cudaFlags,
		variants: []variant{{}},
		results: []*regexp.Regexp{
			re(`^CUDA-capable device count: [0-9]+$`),
			re(`^> Peer access from `),
			re(`^(Test passed|Test failed!)$`),
			re(`^Verification error`),
		},
		timings: []timing{{"cudaMemcpyPeer bandwidth", "GB/s", re(`^cudaMemcpyPeer / cudaMemcpy between GPU[0-9]+ and GPU[0-9]+: ([0-9.]+)GB/s`)}},
	},
	{
		name: "simpleipc", sample: "0_Introduction/simpleIPC", exe: "simpleIPC",
		sources: []string{"simpleIPC.cu", "../../../Common/helper_multiprocess.cpp"}, flags: cudaFlags, libs: []string{"-lrt"},
		variants: []variant{{}},
		// Its processes print concurrently.
		results:     []*regexp.Regexp{re(`^Process [0-9]+ (complete!|failed!)$`), re(`Verification mismatch`), re(`^No CUDA devices support IPC$`)},
		sortResults: true,
	},
	{
		// One program, every GPU: peer matrices whose size is the GPU count. The results are
		// the machine's structure (devices, peer access, connectivity, each matrix's title and
		// columns); the timings, cells of row 0 of the P2P=Enabled matrices, the ones beside
		// GPU 1 present with two GPUs or more; the matrices, every cell of them, every pair.
		name: "p2pbandwidthlatency", sample: "5_Domain_Specific/p2pBandwidthLatencyTest", exe: "p2pBandwidthLatencyTest",
		sources: []string{"p2pBandwidthLatencyTest.cu"}, flags: cudaFlags,
		variants: []variant{
			{},
			{label: "p2p_read", cArgs: []string{"--p2p_read"}, goArgs: []string{"--p2p_read"}},
			{label: "sm_copy", cArgs: []string{"--sm_copy"}, goArgs: []string{"--sm_copy"}},
		},
		results: []*regexp.Regexp{
			re(`^Device: [0-9]+, `),
			re(`^Device=[0-9]+ (CAN|CANNOT) Access Peer Device=[0-9]+$`),
			re(`^P2P Connectivity Matrix$`),
			re(`^     D\\D`),
			re(`^ +[0-9]+\t`),
			re(`Matrix \((GB/s|us)\)$`),
			re(`^   (D\\D|GPU|CPU) `),
			re(`^NOTE: The CUDA Samples`),
		},
		timings: []timing{
			{"unidirectional P2P writes 0-0", "GB/s", re(`^ +0 +([0-9.]+) `)},
			{"unidirectional P2P writes 0-1", "GB/s", re(`^ +0 +[0-9.]+ +([0-9.]+) `)},
			{"bidirectional P2P 0-0", "GB/s", re(`^ +0 +([0-9.]+) `)},
			{"bidirectional P2P 0-1", "GB/s", re(`^ +0 +[0-9.]+ +([0-9.]+) `)},
			{"GPU latency P2P writes 0-0", "us", re(`^ +0 +([0-9.]+) `)},
			{"GPU latency P2P writes 0-1", "us", re(`^ +0 +[0-9.]+ +([0-9.]+) `)},
		},
		matrices: []matrix{
			{"unidirectional P2P writes", "GB/s", re(`^Unidirectional P2P=Enabled Bandwidth \(P2P Writes\) Matrix`)},
			{"unidirectional P2P reads", "GB/s", re(`^Unidirectional P2P=Enabled Bandwidth \(P2P Reads\) Matrix`)},
			{"bidirectional P2P", "GB/s", re(`^Bidirectional P2P=Enabled Bandwidth Matrix`)},
			{"GPU latency P2P writes", "us", re(`^P2P=Enabled Latency \(P2P Writes\) Matrix`)},
			{"GPU latency P2P reads", "us", re(`^P2P=Enabled Latency \(P2P Reads\) Matrix`)},
		},
		after: map[string]*regexp.Regexp{
			"unidirectional P2P writes 0-0": re(`^Unidirectional P2P=Enabled Bandwidth \(P2P Writes\) Matrix`),
			"unidirectional P2P writes 0-1": re(`^Unidirectional P2P=Enabled Bandwidth \(P2P Writes\) Matrix`),
			"bidirectional P2P 0-0":         re(`^Bidirectional P2P=Enabled Bandwidth Matrix`),
			"bidirectional P2P 0-1":         re(`^Bidirectional P2P=Enabled Bandwidth Matrix`),
			"GPU latency P2P writes 0-0":    re(`^P2P=Enabled Latency \(P2P Writes\) Matrix`),
			"GPU latency P2P writes 0-1":    re(`^P2P=Enabled Latency \(P2P Writes\) Matrix`),
		},
	},
	{
		// Texture lookups through a layered array: the check's verdict and the launch shape
		// are results; the five launches' time is the timing.
		name: "simplelayeredtexture", sample: "0_Introduction/simpleLayeredTexture", exe: "simpleLayeredTexture",
		sources: []string{"simpleLayeredTexture.cu"}, flags: cudaFlags,
		variants: []variant{{}, eager},
		results: []*regexp.Regexp{
			re(`^CUDA device \[.*\] has [0-9]+ Multi-Processors SM [0-9.]+$`),
			re(`^Covering 2D data array of `),
			re(`^Comparing kernel output to expected data$`),
		},
		timings: []timing{{"five launches", "ms", re(`^Processing time: ([0-9.]+) msec$`)}},
	},
	{
		name: "simplecubemaptexture", sample: "0_Introduction/simpleCubemapTexture", exe: "simpleCubemapTexture",
		sources: []string{"simpleCubemapTexture.cu"}, flags: cudaFlags,
		variants: []variant{{}, eager},
		results: []*regexp.Regexp{
			re(`^CUDA device \[.*\] has [0-9]+ Multi-Processors SM [0-9.]+$`),
			re(`^Covering Cubemap data array of `),
			re(`^Comparing kernel output to expected data$`),
		},
		timings: []timing{{"one launch", "ms", re(`^Processing time: ([0-9.]+) msec$`)}},
	},
}
