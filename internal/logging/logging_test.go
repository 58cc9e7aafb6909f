package logging_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpuactor/gpuactor/internal/logging"
)

func TestZapWritesToTheSlogHandler(t *testing.T) {
	var out bytes.Buffer
	l := slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelInfo}))
	zl := logging.Zap(l.With("service", "test")).Named("gpuactor")
	zl.Debug("not shown")
	zl.Warn("kernel cache write failed", zap.String("dir", "/x"), zap.Error(errors.New("disk full")), zap.Duration("took", time.Second))
	zl.With(zap.Int("device", 1)).Error("sticky")
	got := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, got, 2, "debug filtered by the handler's level")
	var warn, sticky map[string]any
	require.NoError(t, json.Unmarshal([]byte(got[0]), &warn))
	require.NoError(t, json.Unmarshal([]byte(got[1]), &sticky))
	assert.Equal(t, "WARN", warn["level"])
	assert.Equal(t, "test", warn["service"], "the slog logger's own attributes stay")
	assert.Equal(t, "gpuactor", warn["logger"])
	assert.Equal(t, "/x", warn["dir"])
	assert.Equal(t, "disk full", warn["error"])
	assert.NotNil(t, warn["took"])
	assert.Equal(t, "ERROR", sticky["level"])
	assert.EqualValues(t, 1, sticky["device"], "With's fields become the handler's attributes")
}

func TestDiscardIsZapsNop(t *testing.T) {
	for _, l := range []*slog.Logger{nil, logging.Discard(), logging.OrDiscard(nil)} {
		zl := logging.Zap(l)
		assert.False(t, zl.Core().Enabled(zap.ErrorLevel), "a discarding logger builds no line")
	}
	assert.False(t, logging.Discard().Enabled(t.Context(), slog.LevelError))
}
