// Package logtest records slog records for tests that check what a package logs.
package logtest

import (
	"context"
	"log/slog"
	"slices"
	"sync"
)

// Record is one logged line: its level, message and attributes (the logger's own, from With,
// first), each attribute's value resolved.
type Record struct {
	Level   slog.Level
	Message string
	Attrs   map[string]slog.Value
}

// Recorder is a slog.Handler that keeps every record at any level. Safe for concurrent use;
// loggers made from it with With share its records.
type Recorder struct {
	mu      *sync.Mutex
	records *[]Record
	attrs   []slog.Attr
}

// New returns a Recorder and a logger writing to it.
func New() (*Recorder, *slog.Logger) {
	r := &Recorder{mu: new(sync.Mutex), records: new([]Record)}
	return r, slog.New(r)
}

// Enabled is true at every level.
func (*Recorder) Enabled(context.Context, slog.Level) bool { return true }

// Handle keeps the record.
func (r *Recorder) Handle(_ context.Context, rec slog.Record) error {
	out := Record{Level: rec.Level, Message: rec.Message, Attrs: map[string]slog.Value{}}
	for _, a := range r.attrs {
		out.Attrs[a.Key] = a.Value.Resolve()
	}
	rec.Attrs(func(a slog.Attr) bool {
		out.Attrs[a.Key] = a.Value.Resolve()
		return true
	})
	r.mu.Lock()
	*r.records = append(*r.records, out)
	r.mu.Unlock()
	return nil
}

// WithAttrs is a Recorder sharing r's records that adds attrs to each.
func (r *Recorder) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &Recorder{mu: r.mu, records: r.records, attrs: append(slices.Clip(r.attrs), attrs...)}
}

// WithGroup is r: tests here use no groups.
func (r *Recorder) WithGroup(string) slog.Handler { return r }

// Records are the records kept so far, oldest first.
func (r *Recorder) Records() []Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(*r.records)
}

// Messages are the kept records' messages, oldest first.
func (r *Recorder) Messages() []string {
	var out []string
	for _, rec := range r.Records() {
		out = append(out, rec.Message)
	}
	return out
}

// Find is the first kept record with message msg, and whether there is one.
func (r *Recorder) Find(msg string) (Record, bool) {
	for _, rec := range r.Records() {
		if rec.Message == msg {
			return rec, true
		}
	}
	return Record{}, false
}
