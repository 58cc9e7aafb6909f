package sample

import (
	"fmt"
	"io"
)

// archs is the table NVIDIA's samples (helper_cuda.h) use for an SM version (0xMm): CUDA cores
// per multiprocessor and the architecture's name, oldest first.
var archs = []struct {
	sm    int
	cores int
	name  string
}{
	{0x30, 192, "Kepler"}, {0x32, 192, "Kepler"}, {0x35, 192, "Kepler"}, {0x37, 192, "Kepler"},
	{0x50, 128, "Maxwell"}, {0x52, 128, "Maxwell"}, {0x53, 128, "Maxwell"},
	{0x60, 64, "Pascal"}, {0x61, 128, "Pascal"}, {0x62, 128, "Pascal"},
	{0x70, 64, "Volta"}, {0x72, 64, "Xavier"}, {0x75, 64, "Turing"},
	{0x80, 64, "Ampere"}, {0x86, 128, "Ampere"}, {0x87, 128, "Ampere"}, {0x89, 128, "Ada"},
	{0x90, 128, "Hopper"},
	{0xa0, 128, "Blackwell"}, {0xa1, 128, "Blackwell"}, {0xa3, 128, "Blackwell"},
	{0xb0, 128, "Blackwell"}, {0xc0, 128, "Blackwell"}, {0xc1, 128, "Blackwell"},
}

// ArchName is the architecture's name for an SM version, as the samples print it. For a
// version the table lacks it writes the samples' note on w and answers the newest name.
func ArchName(w io.Writer, major, minor int) string {
	for _, e := range archs {
		if e.sm == major<<4+minor {
			return e.name
		}
	}
	last := archs[len(archs)-1]
	fmt.Fprintf(w, "MapSMtoArchName for SM %d.%d is undefined.  Default to use %s\n", major, minor, last.name)
	return last.name
}

// CoresPerSM is how many CUDA cores one multiprocessor of an SM version has, as the samples
// count them. For a version the table lacks it writes the samples' note on w and answers the
// newest architecture's figure, with known false.
func CoresPerSM(w io.Writer, major, minor int) (cores int, known bool) {
	for _, e := range archs {
		if e.sm == major<<4+minor {
			return e.cores, true
		}
	}
	last := archs[len(archs)-1]
	fmt.Fprintf(w, "MapSMtoCores for SM %d.%d is undefined.  Default to use %d Cores/SM\n", major, minor, last.cores)
	return last.cores, false
}
