package bench

import (
	"fmt"
	"testing"

	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/cudart"
)

// compileEmpty compiles the empty kernel for dev's architecture, straight through NVRTC.
func compileEmpty(b *testing.B, dev backend.Device) ([]byte, backend.ImageKind) {
	major, err := dev.Attribute(backend.AttrComputeCapabilityMajor)
	if err != nil {
		b.Fatal(err)
	}
	minor, err := dev.Attribute(backend.AttrComputeCapabilityMinor)
	if err != nil {
		b.Fatal(err)
	}
	nv, err := cudart.LoadNVRTC()
	if err != nil {
		b.Fatal(err)
	}
	res, err := nv.Compile(emptySource, "empty.cu", []string{fmt.Sprintf("--gpu-architecture=sm_%d%d", major, minor)})
	if err != nil {
		b.Fatal(err)
	}
	return res.Cubin, backend.ImageCubin
}
