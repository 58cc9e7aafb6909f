package cuda

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestChannelsBuildsTheRuntimesDescriptors(t *testing.T) {
	assert.Equal(t, ChannelFormat{X: 32, Kind: ChannelFloat}, Channels[float32](1))
	assert.Equal(t, ChannelFormat{X: 8, Y: 8, Z: 8, W: 8, Kind: ChannelUnsigned}, Channels[uint8](4))
	assert.Equal(t, ChannelFormat{X: 16, Y: 16, Kind: ChannelSigned}, Channels[int16](2))
	assert.Equal(t, uint64(4), Channels[uint8](4).Size())
	assert.Equal(t, uint64(8), Channels[float32](2).Size())
	assert.Equal(t, 4, Channels[uint8](4).Channels())
	assert.Equal(t, "float32x1", Channels[float32](1).String())
	assert.Equal(t, "unsigned8x4", Channels[uint8](4).String())
}

func TestChannelFormatValidateNamesWhatIsWrong(t *testing.T) {
	require.NoError(t, Channels[float32](4).Validate())
	require.NoError(t, ChannelFormat{X: 16, Kind: ChannelFloat}.Validate())
	for _, tc := range []struct {
		f    ChannelFormat
		want string
	}{
		{ChannelFormat{Kind: ChannelFloat}, "no channels"},
		{Channels[float32](3), "3 channels"},
		{ChannelFormat{X: 8, Z: 8, Kind: ChannelUnsigned}, "gap"},
		{ChannelFormat{X: 8, Y: 16, Kind: ChannelUnsigned}, "mixes"},
		{ChannelFormat{X: 8, Kind: ChannelFloat}, "16 or 32"},
		{ChannelFormat{X: 12, Kind: ChannelSigned}, "8, 16 or 32"},
		{ChannelFormat{X: 8, Kind: ChannelKind(9)}, "unsupported channel kind"},
	} {
		err := tc.f.Validate()
		require.Error(t, err, "%v", tc.f)
		assert.Contains(t, err.Error(), tc.want)
	}
}
