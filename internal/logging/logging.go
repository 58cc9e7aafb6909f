// Package logging joins the public API's logger, a *slog.Logger, to the zap logger the
// device's lower layers write to: zap stays their sink (typed fields, no allocation when a
// level is off), and every public option takes slog, so that a service configures one logger
// type for every package.
package logging

import (
	"context"
	"log/slog"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Discard is the logger of a package given none: it writes nothing, and its Enabled is false
// at every level, so that no line is built.
func Discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// OrDiscard is l, or Discard when l is nil.
func OrDiscard(l *slog.Logger) *slog.Logger {
	if l == nil {
		return Discard()
	}
	return l
}

// Zap is a zap logger that writes to l's handler. A nil l, or one that discards, gives zap's
// no-op logger, which costs nothing per call.
func Zap(l *slog.Logger) *zap.Logger {
	if l == nil || l.Handler() == slog.DiscardHandler {
		return zap.NewNop()
	}
	return zap.New(core{h: l.Handler()})
}

// core is a zapcore.Core that writes to a slog.Handler. Levels map to slog's (zap's debug,
// info, warn and error to the same; its panic and fatal levels to error), fields to
// attributes, and a named logger's name to the attribute "logger".
type core struct {
	h slog.Handler
}

func (c core) Enabled(l zapcore.Level) bool {
	return c.h.Enabled(context.Background(), level(l))
}

func (c core) With(fields []zapcore.Field) zapcore.Core {
	return core{h: c.h.WithAttrs(attrs(fields))}
}

func (c core) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c core) Write(e zapcore.Entry, fields []zapcore.Field) error {
	r := slog.NewRecord(e.Time, level(e.Level), e.Message, 0)
	if e.LoggerName != "" {
		r.AddAttrs(slog.String("logger", e.LoggerName))
	}
	r.AddAttrs(attrs(fields)...)
	return c.h.Handle(context.Background(), r)
}

func (core) Sync() error { return nil }

func level(l zapcore.Level) slog.Level {
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

// attrs turns zap fields into attributes in their order, each through zap's own map encoder,
// so every field type (errors, durations, objects) keeps zap's rendering.
func attrs(fields []zapcore.Field) []slog.Attr {
	out := make([]slog.Attr, 0, len(fields))
	for _, f := range fields {
		enc := zapcore.NewMapObjectEncoder()
		f.AddTo(enc)
		for k, v := range enc.Fields {
			out = append(out, slog.Any(k, v))
		}
	}
	return out
}
