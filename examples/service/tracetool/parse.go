package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"golang.org/x/exp/trace"
)

// The service's marks (examples/service/slowtrace.go): regions around a request on the
// client, the handler and the job, each of which logs the request's id first; the client also
// logs the latency.
const (
	regionRequest   = "service.request"
	regionHandle    = "service.handle"
	regionJob       = "service.job"
	categoryID      = "service.id"
	categoryLatency = "service.latency"
)

// span is a stretch of one goroutine's time in one state. For a waiting goroutine, reason is
// what the runtime says it waits on ("chan receive", "select", "sync", "system goroutine
// wait"...) and where is the first frame outside the runtime of the stack it blocked at.
type span struct {
	from, to trace.Time
	state    trace.GoState
	reason   string
	where    string
}

// goroutine is what the trace says of one goroutine.
type goroutine struct {
	id    trace.GoID
	root  string // the function it started in (the outermost frame of a stack seen), or "?"
	spans []span
	// open state, closed into spans at the next transition
	since  trace.Time
	state  trace.GoState
	reason string
	where  string
	// regions begun and not yet ended, innermost last
	open []*region
}

// region is one trace region on one goroutine, with the request id it logged.
type region struct {
	kind     string
	g        trace.GoID
	from, to trace.Time
	id       string
	latency  string
	ended    bool
}

// window is a named global interval: a GC phase or a stop-the-world, or a goroutine's mark
// assist (g set).
type window struct {
	name     string
	g        trace.GoID // trace.NoGoroutine for a global range
	from, to trace.Time
}

// sample is a CPU profile sample the trace holds (the process ran with a CPU profile on):
// which goroutine ran what, at one moment.
type sample struct {
	t     trace.Time
	g     trace.GoID
	where string // the leaf frame, and the first frame outside the runtime when they differ
}

// model is the parsed trace.
type model struct {
	samples    []sample
	start, end trace.Time
	gs         map[trace.GoID]*goroutine
	regions    []*region
	ranges     []window
	procs      map[trace.ProcID]bool // every P seen
	openRanges map[string]*window
}

func (m *model) g(id trace.GoID) *goroutine {
	g := m.gs[id]
	if g == nil {
		g = &goroutine{id: id, root: "?", state: trace.GoUndetermined}
		m.gs[id] = g
	}
	return g
}

// parse reads a whole execution trace.
func parse(r io.Reader) (*model, error) {
	tr, err := trace.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("not a Go execution trace: %w", err)
	}
	m := &model{gs: map[trace.GoID]*goroutine{}, procs: map[trace.ProcID]bool{}, openRanges: map[string]*window{}}
	first := true
	for {
		e, err := tr.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading the trace: %w", err)
		}
		t := e.Time()
		if first {
			m.start, first = t, false
		}
		m.end = max(m.end, t)
		if p := e.Proc(); p != trace.NoProc {
			m.procs[p] = true
		}
		switch e.Kind() {
		case trace.EventStateTransition:
			st := e.StateTransition()
			if st.Resource.Kind != trace.ResourceGoroutine {
				continue
			}
			m.transition(e, st)
		case trace.EventStackSample:
			m.samples = append(m.samples, sample{t: t, g: e.Goroutine(), where: sampleName(e.Stack())})
		case trace.EventRegionBegin:
			g := m.g(e.Goroutine())
			rg := &region{kind: e.Region().Type, g: g.id, from: t}
			g.open = append(g.open, rg)
			m.regions = append(m.regions, rg)
			m.noteRoot(g, e.Stack())
		case trace.EventRegionEnd:
			g := m.g(e.Goroutine())
			kind := e.Region().Type
			for i := len(g.open) - 1; i >= 0; i-- {
				if g.open[i].kind == kind {
					g.open[i].to, g.open[i].ended = t, true
					g.open = append(g.open[:i], g.open[i+1:]...)
					break
				}
			}
		case trace.EventLog:
			l := e.Log()
			g := m.g(e.Goroutine())
			for i := len(g.open) - 1; i >= 0; i-- {
				rg := g.open[i]
				if !strings.HasPrefix(rg.kind, "service.") {
					continue
				}
				switch {
				case l.Category == categoryID && rg.id == "":
					rg.id = l.Message
				case l.Category == categoryLatency && rg.latency == "":
					rg.latency = l.Message
				default:
					continue
				}
				break
			}
		case trace.EventRangeBegin, trace.EventRangeActive:
			rn := e.Range()
			w := &window{name: rn.Name, g: trace.NoGoroutine, from: t}
			if rn.Scope.Kind == trace.ResourceGoroutine {
				w.g = rn.Scope.Goroutine()
			} else if rn.Scope.Kind != trace.ResourceNone {
				continue // a P's range (sweeps): the goroutine's view says as much
			}
			if e.Kind() == trace.EventRangeActive {
				w.from = m.start
			}
			m.openRanges[rangeKey(rn.Name, w.g)] = w
		case trace.EventRangeEnd:
			rn := e.Range()
			g := trace.NoGoroutine
			if rn.Scope.Kind == trace.ResourceGoroutine {
				g = rn.Scope.Goroutine()
			}
			k := rangeKey(rn.Name, g)
			if w := m.openRanges[k]; w != nil {
				w.to = t
				m.ranges = append(m.ranges, *w)
				delete(m.openRanges, k)
			}
		}
	}
	if first {
		return nil, errors.New("the trace holds no events")
	}
	for _, g := range m.gs { // close every open state and region at the trace's end
		g.close(m.end)
		for _, rg := range g.open {
			rg.to = m.end
		}
	}
	for _, w := range m.openRanges {
		w.to = m.end
		m.ranges = append(m.ranges, *w)
	}
	return m, nil
}

func rangeKey(name string, g trace.GoID) string { return fmt.Sprintf("%s/%d", name, g) }

func (m *model) transition(e trace.Event, st trace.StateTransition) {
	g := m.g(st.Resource.Goroutine())
	from, to := st.Goroutine()
	t := e.Time()
	if from == trace.GoUndetermined {
		// A status: the goroutine is in state to, and was since the trace began (a flight
		// recorder's window begins in the middle of things) or since its last transition.
		if g.state == trace.GoUndetermined {
			g.since, g.state = m.start, to
		}
		if g.state == to {
			m.noteRoot(g, st.Stack)
			return
		}
	} else if g.state == trace.GoUndetermined && from != trace.GoNotExist {
		g.since, g.state = m.start, from
	}
	g.close(t)
	g.since, g.state, g.reason, g.where = t, to, "", ""
	if to == trace.GoWaiting || to == trace.GoSyscall || to == trace.GoRunnable {
		g.reason = st.Reason
		g.where = userFrame(st.Stack)
	}
	m.noteRoot(g, st.Stack)
}

// close ends g's open state at t.
func (g *goroutine) close(t trace.Time) {
	if g.state != trace.GoUndetermined && g.state != trace.GoNotExist && t > g.since {
		g.spans = append(g.spans, span{from: g.since, to: t, state: g.state, reason: g.reason, where: g.where})
	}
	g.since = t
}

// noteRoot takes the outermost frame of s as g's start function, once.
func (m *model) noteRoot(g *goroutine, s trace.Stack) {
	if g.root != "?" {
		return
	}
	last := ""
	for f := range s.Frames() {
		last = f.Func
	}
	if last != "" && last != "runtime.goexit" {
		g.root = last
	}
}

// userFrame is the first frame of s outside the runtime and the standard library's
// synchronisation, which says which code waited; "" when s has none.
func userFrame(s trace.Stack) string {
	first := ""
	for f := range s.Frames() {
		if first == "" {
			first = f.Func
		}
		if strings.HasPrefix(f.Func, "runtime.") || strings.HasPrefix(f.Func, "sync.") ||
			strings.HasPrefix(f.Func, "internal/") || strings.HasPrefix(f.Func, "time.Sleep") {
			continue
		}
		return f.Func
	}
	return first
}

// sampleName is a sample's leaf frame, with the program's first frame (outside the standard
// library) when that is another.
func sampleName(s trace.Stack) string {
	leaf, own := "", ""
	for f := range s.Frames() {
		if leaf == "" {
			leaf = f.Func
		}
		first, _, nested := strings.Cut(f.Func, "/") // a module's path begins with a domain
		if strings.HasPrefix(f.Func, "main.") || nested && strings.Contains(first, ".") && !strings.HasPrefix(f.Func, "golang.org/") {
			own = f.Func
			break
		}
	}
	if own == "" || own == leaf {
		return leaf
	}
	return leaf + " in " + own
}
