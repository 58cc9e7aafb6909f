package main

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
	"github.com/gpuactor/gpuactor/sim"
)

// deviceLines are the patterns of one device's block, in the C sample's order.
var deviceLines = []string{
	``,
	`Device \d+: "gpuactor simulator"`,
	`  CUDA Driver Version / Runtime Version          \d+\.\d / \d+\.\d`,
	`  CUDA Capability Major/Minor version number:    9\.0`,
	`  Total amount of global memory:                 16384 MBytes \(17179869184 bytes\)`,
	`  \(008\) Multiprocessors, \(128\) CUDA Cores/MP:    1024 CUDA Cores`,
	`  GPU Max Clock rate:                            1980 MHz \(1\.98 GHz\)`,
	`  Memory Clock rate:                             2619 Mhz`,
	`  Memory Bus Width:                              5120-bit`,
	`  L2 Cache Size:                                 52428800 bytes`,
	`  Maximum Texture Dimension Size \(x,y,z\)         1D=\(131072\), 2D=\(131072, 65536\), 3D=\(16384, 16384, 16384\)`,
	`  Maximum Layered 1D Texture Size, \(num\) layers  1D=\(32768\), 2048 layers`,
	`  Maximum Layered 2D Texture Size, \(num\) layers  2D=\(32768, 32768\), 2048 layers`,
	`  Total amount of constant memory:               65536 bytes`,
	`  Total amount of shared memory per block:       49152 bytes`,
	`  Total shared memory per multiprocessor:        233472 bytes`,
	`  Total number of registers available per block: 65536`,
	`  Warp size:                                     32`,
	`  Maximum number of threads per multiprocessor:  2048`,
	`  Maximum number of threads per block:           1024`,
	`  Max dimension size of a thread block \(x,y,z\): \(1024, 1024, 64\)`,
	`  Max dimension size of a grid size    \(x,y,z\): \(2147483647, 65535, 65535\)`,
	`  Maximum memory pitch:                          2147483647 bytes`,
	`  Texture alignment:                             512 bytes`,
	`  Concurrent copy and kernel execution:          Yes with 3 copy engine\(s\)`,
	`  Run time limit on kernels:                     No`,
	`  Integrated GPU sharing Host Memory:            No`,
	`  Support host page-locked memory mapping:       Yes`,
	`  Alignment requirement for Surfaces:            Yes`,
	`  Device has ECC support:                        Enabled`,
	`  Device supports Unified Addressing \(UVA\):      Yes`,
	`  Device supports Managed Memory:                Yes`,
	`  Device supports Compute Preemption:            Yes`,
	`  Supports Cooperative Kernel Launch:            Yes`,
	`  Device PCI Domain ID / Bus ID / location ID:   0 / \d+ / 0`,
	`  Compute Mode:`,
	`     < Default \(multiple host threads can use ::cudaSetDevice\(\) with device simultaneously\) >`,
}

// TestRun runs the sample on simulated machines of one, two and three devices and checks
// every line of its output: the header, each device's block, the peer matrix (none for one
// device; every ordered pair of distinct devices otherwise), the summary and the result.
func TestRun(t *testing.T) {
	for _, n := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("%d devices", n), func(t *testing.T) {
			var out bytes.Buffer
			c := config{Flags: sample.Flags{Backend: "sim"}, sim: sim.New(sim.WithDevices(n))}
			require.NoError(t, run(context.Background(), &out, "./deviceQuery", c))

			want := []string{
				`\./deviceQuery Starting\.\.\.`, ``,
				` CUDA Device Query \(Runtime API\) version \(CUDART static linking\)`, ``,
				fmt.Sprintf(`Detected %d CUDA Capable device\(s\)`, n),
			}
			for range n {
				want = append(want, deviceLines...)
			}
			if n >= 2 {
				for i := range n {
					for j := range n {
						if i != j {
							want = append(want, fmt.Sprintf(`> Peer access from gpuactor simulator \(GPU%d\) -> gpuactor simulator \(GPU%d\) : Yes`, i, j))
						}
					}
				}
			}
			want = append(want, ``,
				fmt.Sprintf(`deviceQuery, CUDA Driver = CUDART, CUDA Driver Version = \d+\.\d, CUDA Runtime Version = \d+\.\d, NumDevs = %d`, n),
				`Result = PASS`)

			got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			require.Len(t, got, len(want), "output:\n%s", out.String())
			for i, w := range want {
				assert.Regexp(t, regexp.MustCompile(`^`+w+`$`), got[i], "line %d", i+1)
			}
		})
	}
}

// TestFormats checks the version numbers and compute modes as the C sample prints them.
func TestFormats(t *testing.T) {
	assert.Equal(t, "13.0", version(13000))
	assert.Equal(t, "12.8", version(12080))
	assert.Equal(t, "0.0", version(0))
	assert.Equal(t, "Unknown", computeMode(4))
	assert.Equal(t, "Unknown", computeMode(-1))
	assert.True(t, strings.HasPrefix(computeMode(3), "Exclusive Process"))
	assert.True(t, strings.HasPrefix(computeMode(2), "Prohibited"))
}

// TestDescribeVariants prints a device whose flags are all off and whose L2 size is zero:
// the C sample then leaves out the L2 line and prints No and Disabled.
func TestDescribeVariants(t *testing.T) {
	var out bytes.Buffer
	describe(&out, device.Properties{Name: "x", ComputeCapability: device.ComputeCapability{Major: 8, Minor: 0}, MultiProcessors: 108}, attrs{computeMode: 3})
	s := out.String()
	assert.NotContains(t, s, "L2 Cache Size")
	assert.Contains(t, s, "  (108) Multiprocessors, (064) CUDA Cores/MP:    6912 CUDA Cores\n")
	assert.Contains(t, s, "  Device has ECC support:                        Disabled\n")
	assert.Contains(t, s, "  Alignment requirement for Surfaces:            No\n")
	assert.Contains(t, s, "     < Exclusive Process (many threads in one process is able to use ::cudaSetDevice() with this device) >\n")
	assert.NotContains(t, s, "Yes")
	assert.NotContains(t, s, "MultiDevice", "a 13.0 runtime's sample has no such line")
	assert.NotContains(t, s, "TCC or WDDM")
}

// TestDescribeOlderRuntimeAndWindows prints the lines the C sample prints when built for a
// runtime before 13.0 and on Windows, where they sit in its order.
func TestDescribeOlderRuntimeAndWindows(t *testing.T) {
	var out bytes.Buffer
	yes, no := true, false
	describe(&out, device.Properties{Name: "x", ComputeCapability: device.ComputeCapability{Major: 9}, CooperativeLaunch: true},
		attrs{clockKHz: 1_755_000, memoryClockKHz: 2_619_000, multiDeviceCoop: &yes, tcc: &no})
	s := out.String()
	assert.Contains(t, s, "  GPU Max Clock rate:                            1755 MHz (1.75 GHz)\n")
	assert.Contains(t, s, "  Memory Clock rate:                             2619 Mhz\n")
	assert.Contains(t, s, "  Device has ECC support:                        Disabled\n"+
		"  CUDA Device Driver Mode (TCC or WDDM):         WDDM (Windows Display Driver Model)\n")
	assert.Contains(t, s, "  Supports Cooperative Kernel Launch:            Yes\n"+
		"  Supports MultiDevice Co-op Kernel Launch:      Yes\n"+
		"  Device PCI Domain ID")
}
