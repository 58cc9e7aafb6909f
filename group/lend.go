package group

import (
	"context"
	"log/slog"
	"slices"
	"sync"

	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/streams"
)

// lending guards a generation's list of streams against a job that closed the stream it was
// lent: the group replaces that stream (renew) while the generation may be closing.
type lending struct {
	mu     sync.Mutex
	closed bool // closeStreams took the streams: one made now would be left open
}

// isClosed reports whether s was closed: by a job it was lent to, or with its device.
func isClosed(s *streams.Stream) bool { return (*core.Stream)(s).Alive() != nil }

// giveBack returns s, which a job held, to gn's free streams. A stream the job closed is
// replaced first by a new one on gn's device, so that no later job is lent a closed stream.
func (gn *generation) giveBack(s *streams.Stream) {
	if isClosed(s) {
		s = gn.renew(s)
	}
	gn.free <- s
}

// lend checks s, just taken from gn's free streams for a job, as giveBack did: a stream
// closed since it came back (by a job's goroutine that outlived the job, or a Close whose
// context ended before the stream was closed) is replaced before a job sees it.
func (gn *generation) lend(s *streams.Stream) *streams.Stream {
	if isClosed(s) {
		return gn.renew(s)
	}
	return s
}

// renew makes a stream of gn's device in place of old, which a job closed, and returns it;
// old itself when no stream can be made (the device failed or closed, or gn is closing),
// after logging why: the jobs lent it then fail with an error wrapping device.ErrClosed.
func (gn *generation) renew(old *streams.Stream) *streams.Stream {
	s, err := streams.New(context.Background(), gn.dev)
	if err != nil {
		if !gn.down() {
			gn.g.cfg.log.Warn("group: a job closed its stream and no other could be made", slog.Int("device", gn.dev.Ordinal()),
				slog.Any("error", err))
		}
		return old
	}
	gn.lent.mu.Lock()
	defer gn.lent.mu.Unlock()
	i := slices.Index(gn.streams, old)
	if gn.lent.closed || i < 0 {
		_ = s.Close(context.Background())
		return old
	}
	gn.streams[i] = s
	gn.g.cfg.log.Debug("group: a job closed its stream: replaced", slog.Int("device", gn.dev.Ordinal()))
	return s
}

// takeStreams hands the streams of gn to closeStreams, once, less those already closed (by a
// job, where no other stream could replace it): closing them again would be an error.
func (gn *generation) takeStreams() []*streams.Stream {
	gn.lent.mu.Lock()
	defer gn.lent.mu.Unlock()
	gn.lent.closed = true
	ss := slices.DeleteFunc(gn.streams, isClosed)
	gn.streams = nil
	return ss
}
