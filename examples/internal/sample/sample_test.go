package sample

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCRand checks the generator against the first numbers glibc's rand() gives a program
// that never calls srand.
func TestCRand(t *testing.T) {
	g := NewCRand()
	want := []int32{1804289383, 846930886, 1681692777, 1714636915, 1957747793, 424238335, 719885386, 1649760492}
	got := make([]int32, len(want))
	for i := range got {
		got[i] = g.Next()
	}
	require.Equal(t, want, got)
}

// TestCoresPerSM checks the table for a few architectures and the samples' fallback (the
// newest figure, with a note) for one it does not know.
func TestCoresPerSM(t *testing.T) {
	for _, tc := range []struct {
		major, minor, cores int
	}{{9, 0, 128}, {8, 0, 64}, {8, 6, 128}, {7, 0, 64}, {6, 1, 128}, {3, 5, 192}, {12, 1, 128}} {
		var w bytes.Buffer
		got, known := CoresPerSM(&w, tc.major, tc.minor)
		assert.True(t, known, "%d.%d", tc.major, tc.minor)
		assert.Equal(t, tc.cores, got, "%d.%d", tc.major, tc.minor)
		assert.Empty(t, w.String())
	}
	var w bytes.Buffer
	got, known := CoresPerSM(&w, 99, 9)
	assert.False(t, known)
	assert.Equal(t, 128, got)
	assert.Equal(t, "MapSMtoCores for SM 99.9 is undefined.  Default to use 128 Cores/SM\n", w.String())
}

// TestArchName checks names of known versions and the fallback's note.
func TestArchName(t *testing.T) {
	var w bytes.Buffer
	assert.Equal(t, "Hopper", ArchName(&w, 9, 0))
	assert.Equal(t, "Ampere", ArchName(&w, 8, 6))
	assert.Equal(t, "Ada", ArchName(&w, 8, 9))
	assert.Empty(t, w.String())
	assert.Equal(t, "Blackwell", ArchName(&w, 99, 9))
	assert.Equal(t, "MapSMtoArchName for SM 99.9 is undefined.  Default to use Blackwell\n", w.String())
}
