package device_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpuactor/gpuactor/device"
)

func TestSlogLoggerGetsTheLibrarysLines(t *testing.T) {
	var out bytes.Buffer
	l := slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx := context.Background()
	dev, err := device.Open(ctx, 0, device.WithSimulator(device.NewSimulator()), device.WithSlogLogger(l.With("service", "test")))
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

func TestSlogLoggerKeepsLevelsAndFields(t *testing.T) {
	var out bytes.Buffer
	l := slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelInfo}))
	zl := device.ZapOfOptionForTest(device.WithSlogLogger(l)).Named("gpuactor")
	zl.Debug("not shown")
	zl.Warn("kernel cache write failed", zap.String("dir", "/x"), zap.Error(errors.New("disk full")), zap.Duration("took", time.Second))
	zl.Error("sticky")
	got := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, got, 2, "debug filtered by the handler's level")
	var warn map[string]any
	require.NoError(t, json.Unmarshal([]byte(got[0]), &warn))
	assert.Equal(t, "WARN", warn["level"])
	assert.Equal(t, "gpuactor", warn["logger"])
	assert.Equal(t, "/x", warn["dir"])
	assert.Equal(t, "disk full", warn["error"])
	assert.NotNil(t, warn["took"])
	assert.Contains(t, got[1], `"level":"ERROR"`)
}
