package nccl

import (
	"math"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// The layout NCCL 2.18's ncclConfig_t has on LP64, worked out from its declaration: a
// wrong offset would hand NCCL a blocking or CTA value in the wrong field.
func TestConfigLayout(t *testing.T) {
	var c Config
	assert.EqualValues(t, 48, unsafe.Sizeof(c))
	assert.EqualValues(t, 0, unsafe.Offsetof(c.Size))
	assert.EqualValues(t, 8, unsafe.Offsetof(c.Magic))
	assert.EqualValues(t, 12, unsafe.Offsetof(c.Version))
	assert.EqualValues(t, 16, unsafe.Offsetof(c.Blocking))
	assert.EqualValues(t, 20, unsafe.Offsetof(c.CGAClusterSize))
	assert.EqualValues(t, 24, unsafe.Offsetof(c.MinCTAs))
	assert.EqualValues(t, 28, unsafe.Offsetof(c.MaxCTAs))
	assert.EqualValues(t, 32, unsafe.Offsetof(c.NetName))
	assert.EqualValues(t, 40, unsafe.Offsetof(c.SplitShare))
}

func TestNewConfigIsTheInitializer(t *testing.T) {
	c := NewConfig()
	assert.EqualValues(t, 48, c.Size)
	assert.EqualValues(t, uint32(0xcafebeef), c.Magic)
	assert.EqualValues(t, 21800, c.Version) // NCCL_VERSION(2,18,0) = 2*10000 + 18*100
	for _, v := range []int32{c.Blocking, c.CGAClusterSize, c.MinCTAs, c.MaxCTAs, c.SplitShare} {
		assert.EqualValues(t, math.MinInt32, v)
	}
	assert.Nil(t, c.NetName)
}
