package device

import (
	"context"
	"log/slog"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// WithSlogLogger sends the library's log lines to a log/slog logger, for a program that logs
// through slog rather than zap; the default discards everything. Levels map to slog's (zap's
// debug, info, warn and error to the same; its panic and fatal levels to error), fields to
// attributes, and a named logger's name to the attribute "logger". Of WithLogger and
// WithSlogLogger, the last given wins.
func WithSlogLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = zap.New(slogCore{h: l.Handler()})
		}
	}
}

// slogCore is a zapcore.Core that writes to a slog.Handler.
type slogCore struct {
	h slog.Handler
}

func (s slogCore) Enabled(l zapcore.Level) bool {
	return s.h.Enabled(context.Background(), slogLevel(l))
}

func (s slogCore) With(fields []zapcore.Field) zapcore.Core {
	return slogCore{h: s.h.WithAttrs(slogAttrs(fields))}
}

func (s slogCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if s.Enabled(e.Level) {
		return ce.AddCore(e, s)
	}
	return ce
}

func (s slogCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	r := slog.NewRecord(e.Time, slogLevel(e.Level), e.Message, 0)
	if e.LoggerName != "" {
		r.AddAttrs(slog.String("logger", e.LoggerName))
	}
	r.AddAttrs(slogAttrs(fields)...)
	return s.h.Handle(context.Background(), r)
}

func (slogCore) Sync() error { return nil }

func slogLevel(l zapcore.Level) slog.Level {
	switch {
	case l <= zapcore.DebugLevel:
		return slog.LevelDebug
	case l == zapcore.InfoLevel:
		return slog.LevelInfo
	case l == zapcore.WarnLevel:
		return slog.LevelWarn
	default:
		return slog.LevelError
	}
}

// slogAttrs turns zap fields into attributes in their order, each through zap's own map
// encoder, so every field type (errors, durations, objects) keeps zap's rendering.
func slogAttrs(fields []zapcore.Field) []slog.Attr {
	attrs := make([]slog.Attr, 0, len(fields))
	for _, f := range fields {
		enc := zapcore.NewMapObjectEncoder()
		f.AddTo(enc)
		for k, v := range enc.Fields {
			attrs = append(attrs, slog.Any(k, v))
		}
	}
	return attrs
}
