package device_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/sim"
)

func TestLoggerGetsTheLibrarysLines(t *testing.T) {
	var out bytes.Buffer
	l := slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx := context.Background()
	dev, err := device.Open(ctx, 0, device.WithSimulator(sim.New()), device.WithLogger(l.With("service", "test")))
	require.NoError(t, err)
	require.NoError(t, dev.Close())

	var lines []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		lines = append(lines, m)
	}
	require.NotEmpty(t, lines)
	var open map[string]any
	for _, m := range lines {
		assert.Equal(t, "test", m["service"], "the slog logger's own attributes stay")
		if m["msg"] == "device open" {
			open = m
		}
	}
	require.NotNil(t, open, "the device's open line: %s", out.String())
	assert.Equal(t, "DEBUG", open["level"])
}

func TestLoggerNilDiscards(t *testing.T) {
	zl := device.ZapOfOptionForTest(device.WithLogger(nil))
	require.NotNil(t, zl)
	assert.False(t, zl.Core().Enabled(zap.ErrorLevel))
}
