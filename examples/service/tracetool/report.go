package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"golang.org/x/exp/trace"
)

// actorRoot is the function a device actor's goroutine runs (package actor): the goroutine
// locked to the device's thread.
const actorRoot = "github.com/gpuactor/gpuactor/actor.(*Actor).main"

// request is one request's regions: the client's, the handler's and its job's (more than one
// when the job ran again after a device failure).
type request struct {
	id     string
	client *region
	handle *region
	jobs   []*region
}

func (r *request) latency() time.Duration { return r.client.to.Sub(r.client.from) }

// requests gathers the regions by request id; only requests whose client region began and
// ended inside the trace count.
func (m *model) requests() []*request {
	byID := map[string]*request{}
	get := func(id string) *request {
		r := byID[id]
		if r == nil {
			r = &request{id: id}
			byID[id] = r
		}
		return r
	}
	for _, rg := range m.regions {
		if rg.id == "" {
			continue
		}
		switch rg.kind {
		case regionRequest:
			get(rg.id).client = rg
		case regionHandle:
			get(rg.id).handle = rg
		case regionJob:
			r := get(rg.id)
			r.jobs = append(r.jobs, rg)
		}
	}
	var out []*request
	for _, r := range byID {
		if r.client != nil && r.client.ended && r.client.from > m.start {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b *request) int { return cmp.Compare(a.latency(), b.latency()) })
	return out
}

// split is a goroutine's time in a window by state, and its waits by what they waited on.
type split struct {
	running, runnable, waiting, syscall time.Duration
	longestRunnable                     time.Duration
	waits                               map[string]time.Duration // "reason at where"
}

func (g *goroutine) split(from, to trace.Time) split {
	s := split{waits: map[string]time.Duration{}}
	for _, sp := range g.spans {
		d := overlap(sp.from, sp.to, from, to)
		if d <= 0 {
			continue
		}
		switch sp.state {
		case trace.GoRunning:
			s.running += d
		case trace.GoRunnable:
			s.runnable += d
			s.longestRunnable = max(s.longestRunnable, d)
		case trace.GoWaiting:
			s.waiting += d
			s.waits[waitName(sp)] += d
		case trace.GoSyscall:
			s.syscall += d
			s.waits["syscall at "+short(cmp.Or(sp.where, "?"))] += d
		}
	}
	return s
}

func waitName(sp span) string {
	r := cmp.Or(sp.reason, "?")
	if sp.where != "" {
		return r + " at " + short(sp.where)
	}
	return r
}

func overlap(a0, a1, b0, b1 trace.Time) time.Duration {
	lo, hi := max(a0, b0), min(a1, b1)
	if hi <= lo {
		return 0
	}
	return hi.Sub(lo)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3f ms", float64(d)/1e6) }

func pct(d, of time.Duration) string {
	if of <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(d)/float64(of))
}

// report writes the analysis: the requests the trace holds, then, for each of the slowest n
// (or each slower than min, when min > 0), what its goroutines did and what the process did
// meanwhile.
func (m *model) report(w io.Writer, n int, minLatency time.Duration) {
	reqs := m.requests()
	fmt.Fprintf(w, "trace: %s, %d goroutines, %d Ps seen, %d requests complete in it\n",
		ms(m.end.Sub(m.start)), len(m.gs), len(m.procs), len(reqs))
	if len(reqs) == 0 {
		fmt.Fprintln(w, "no request regions: was the trace written by the service with -trace-slow?")
		return
	}
	q := func(f float64) time.Duration { return reqs[min(len(reqs)-1, int(f*float64(len(reqs))))].latency() }
	fmt.Fprintf(w, "request latency in the trace: p50 %s, p99 %s, max %s\n", ms(q(0.5)), ms(q(0.99)), ms(q(1)))
	var pick []*request
	for i := len(reqs) - 1; i >= 0; i-- {
		if (minLatency > 0 && reqs[i].latency() >= minLatency) || (minLatency <= 0 && len(pick) < n) {
			pick = append(pick, reqs[i])
		}
	}
	for _, r := range pick {
		fmt.Fprintln(w)
		m.explain(w, r)
	}
}

// explain writes what request r waited on.
func (m *model) explain(w io.Writer, r *request) {
	c := r.client
	fmt.Fprintf(w, "request %s: %s (from %s to %s into the trace)\n", r.id, ms(r.latency()), ms(c.from.Sub(m.start)), ms(c.to.Sub(m.start)))
	m.phases(w, r)
	m.goroutineView(w, "client", c)
	if r.handle != nil {
		m.goroutineView(w, "handler", r.handle)
	}
	for _, j := range r.jobs {
		if r.handle != nil && j.g == r.handle.g {
			m.goroutineView(w, "job (inline, on the handler's goroutine)", j)
		} else {
			m.goroutineView(w, "job (queued: on a group worker)", j)
		}
	}
	m.gcView(w, c.from, c.to, r)
	m.timeline(w, c.from, c.to)
	m.processView(w, c.from, c.to)
}

// timelineSlices is how many slices timeline cuts a request's time into.
const timelineSlices = 10

// timeline writes, for each tenth of [from, to), how many requests of the whole process
// completed, how many goroutines ran and waited for a P on average, the device actors' share
// running, and the GC's: a stall that held every request shows as slices in which none
// completed, one that held this request alone as slices in which the others went on.
func (m *model) timeline(w io.Writer, from, to trace.Time) {
	step := to.Sub(from) / timelineSlices
	if step <= 0 {
		return
	}
	done := make([]int, timelineSlices)
	for _, rg := range m.regions {
		if rg.kind == regionRequest && rg.ended && rg.to >= from && rg.to <= to {
			done[min(timelineSlices-1, int(rg.to.Sub(from)/step))]++
		}
	}
	var actors []*goroutine
	for _, g := range m.gs {
		if g.root == actorRoot {
			actors = append(actors, g)
		}
	}
	fmt.Fprintf(w, "  timeline, slices of %s: requests completed, goroutines running / runnable on average, actors running, GC\n", ms(step))
	for i := range timelineSlices {
		a := from + trace.Time(i)*trace.Time(step)
		b := a + trace.Time(step)
		var running, runnable time.Duration
		for _, g := range m.gs {
			s := g.split(a, b)
			running += s.running
			runnable += s.runnable
		}
		var actorRun time.Duration
		for _, g := range actors {
			actorRun += g.split(a, b).running
		}
		gc := ""
		var stw, mark time.Duration
		for _, x := range m.ranges {
			if x.g != trace.NoGoroutine {
				continue
			}
			if d := overlap(x.from, x.to, a, b); d > 0 {
				if strings.HasPrefix(x.name, "stop-the-world") {
					stw += d
				} else {
					mark += d
				}
			}
		}
		if stw > 0 || mark > 0 {
			gc = fmt.Sprintf("STW %s, other %s", ms(stw), ms(mark))
		}
		actorShare := "-"
		if len(actors) > 0 {
			actorShare = pct(actorRun, step*time.Duration(len(actors)))
		}
		fmt.Fprintf(w, "    %10s %6d %7.1f / %-7.1f %5s  %s\n", ms(a.Sub(from)), done[i],
			float64(running)/float64(step), float64(runnable)/float64(step), actorShare, gc)
	}
}

// phases splits the request's time into its steps, from the regions' bounds.
func (m *model) phases(w io.Writer, r *request) {
	c := r.client
	if r.handle == nil {
		fmt.Fprintln(w, "  phases: the handler's region is not in the trace")
		return
	}
	h := r.handle
	type step struct {
		name string
		d    time.Duration
	}
	steps := []step{{"client sends, server reads the headers", h.from.Sub(c.from)}}
	if len(r.jobs) > 0 {
		j0, j1 := r.jobs[0], r.jobs[len(r.jobs)-1]
		steps = append(steps,
			step{"handler reads the body, group places the job (queue)", j0.from.Sub(h.from)},
			step{"job (device work; retries included)", j1.to.Sub(j0.from)},
			step{"handler answers", h.to.Sub(j1.to)})
	} else {
		steps = append(steps, step{"handler (no job region)", h.to.Sub(h.from)})
	}
	steps = append(steps, step{"client receives and checks the answer", c.to.Sub(h.to)})
	fmt.Fprintln(w, "  phases:")
	for _, s := range steps {
		fmt.Fprintf(w, "    %-56s %12s  %4s\n", s.name, ms(s.d), pct(s.d, r.latency()))
	}
}

// goroutineView writes how region rg's goroutine spent the region: running, runnable (ready
// but without a P), waiting (on what, where) or in a system call, and the library's regions
// inside it.
func (m *model) goroutineView(w io.Writer, role string, rg *region) {
	g := m.gs[rg.g]
	d := rg.to.Sub(rg.from)
	s := g.split(rg.from, rg.to)
	fmt.Fprintf(w, "  %s: goroutine %d (%s), %s: running %s, runnable %s (longest %s), waiting %s, syscall %s\n",
		role, g.id, short(g.root), ms(d), pct(s.running, d), pct(s.runnable, d), ms(s.longestRunnable), pct(s.waiting, d), pct(s.syscall, d))
	for _, kv := range top(s.waits, 5) {
		if kv.d >= time.Microsecond { // a wait the trace began in the middle of has no reason
			fmt.Fprintf(w, "      waited %12s  %s\n", ms(kv.d), kv.k)
		}
	}
	inner := map[string]time.Duration{}
	for _, o := range m.regions {
		if o.g == rg.g && o != rg && !strings.HasPrefix(o.kind, "service.") {
			if d := overlap(o.from, o.to, rg.from, rg.to); d > 0 {
				inner[o.kind] += d
			}
		}
	}
	for _, kv := range top(inner, 5) {
		fmt.Fprintf(w, "      in region %-24s %12s\n", kv.k, ms(kv.d))
	}
}

// gcView writes the collector's work that overlapped [from, to): its phases, stop-the-world
// pauses and the mark assists of the request's goroutines.
func (m *model) gcView(w io.Writer, from, to trace.Time, r *request) {
	mine := map[trace.GoID]bool{r.client.g: true}
	if r.handle != nil {
		mine[r.handle.g] = true
	}
	for _, j := range r.jobs {
		mine[j.g] = true
	}
	global := map[string]time.Duration{}
	var stw, longest time.Duration
	nstw := 0
	var assist time.Duration
	for _, x := range m.ranges {
		d := overlap(x.from, x.to, from, to)
		if d <= 0 {
			continue
		}
		switch {
		case x.g != trace.NoGoroutine:
			if mine[x.g] {
				assist += d
			}
		case strings.HasPrefix(x.name, "stop-the-world"):
			stw += d
			nstw++
			longest = max(longest, d)
			global[x.name] += d
		default:
			global[x.name] += d
		}
	}
	fmt.Fprintf(w, "  GC and stop-the-world in the request: %d pauses, %s in all (longest %s); mark assists by its goroutines %s\n",
		nstw, ms(stw), ms(longest), ms(assist))
	for _, kv := range top(global, 5) {
		fmt.Fprintf(w, "      %-48s %12s\n", kv.k, ms(kv.d))
	}
}

// processView writes what every goroutine did during [from, to): how many ran and how many
// waited for a P on average, and by the function each goroutine started in, the ones that
// waited longest for a P, with the device actors always shown.
func (m *model) processView(w io.Writer, from, to trace.Time) {
	d := to.Sub(from)
	type class struct {
		n                 int
		split             split
		longestRunnableOf trace.GoID
	}
	classes := map[string]*class{}
	var running, runnable time.Duration
	var edges []edge
	for _, g := range m.gs {
		s := g.split(from, to)
		if s.running+s.runnable+s.waiting+s.syscall == 0 {
			continue
		}
		running += s.running
		runnable += s.runnable
		c := classes[g.root]
		if c == nil {
			c = &class{}
			classes[g.root] = c
		}
		c.n++
		if c.split.waits == nil {
			c.split.waits = map[string]time.Duration{}
		}
		for k, d := range s.waits {
			c.split.waits[k] += d
		}
		c.split.running += s.running
		c.split.runnable += s.runnable
		c.split.waiting += s.waiting
		c.split.syscall += s.syscall
		if s.longestRunnable > c.split.longestRunnable {
			c.split.longestRunnable, c.longestRunnableOf = s.longestRunnable, g.id
		}
		for _, sp := range g.spans {
			if sp.state == trace.GoRunnable && overlap(sp.from, sp.to, from, to) > 0 {
				edges = append(edges, edge{max(sp.from, from), 1}, edge{min(sp.to, to), -1})
			}
		}
	}
	fmt.Fprintf(w, "  process in the request: on average %.1f goroutines running and %.1f runnable (waiting for a P), at most %d runnable at once\n",
		float64(running)/float64(d), float64(runnable)/float64(d), peak(edges))
	names := make([]string, 0, len(classes))
	for k := range classes {
		names = append(names, k)
	}
	slices.SortFunc(names, func(a, b string) int {
		if (a == actorRoot) != (b == actorRoot) {
			if a == actorRoot {
				return -1
			}
			return 1
		}
		return cmp.Compare(classes[b].split.runnable, classes[a].split.runnable)
	})
	fmt.Fprintf(w, "    %-60s %4s %9s %9s %9s %9s %14s\n", "goroutines started in", "n", "running", "runnable", "waiting", "syscall", "longest runnable")
	for i, k := range names {
		if i >= 10 {
			break
		}
		c := classes[k]
		per := d * time.Duration(c.n)
		fmt.Fprintf(w, "    %-60s %4d %9s %9s %9s %9s %14s\n", short(k), c.n, pct(c.split.running, per), pct(c.split.runnable, per),
			pct(c.split.waiting, per), pct(c.split.syscall, per), ms(c.split.longestRunnable))
	}
	if a, ok := classes[actorRoot]; ok {
		fmt.Fprintln(w, "    the device actors' waits (an isolated device's actor waits for its worker's answers):")
		for _, kv := range top(a.split.waits, 4) {
			fmt.Fprintf(w, "      waited %12s  %s\n", ms(kv.d), kv.k)
		}
	} else {
		fmt.Fprintln(w, "    (no device actor goroutine in the trace: isolated devices' actors run in this process; is this the service's trace?)")
	}
	m.samplesView(w, from, to)
}

// samplesView writes what the CPU profile's samples in [from, to) caught the device actors
// and every goroutine doing, when the process ran with one (-cpuprofile): what an actor that
// the trace shows running was running.
func (m *model) samplesView(w io.Writer, from, to trace.Time) {
	actor, all := map[string]int{}, map[string]int{}
	n, onActors := 0, 0
	for _, s := range m.samples {
		if s.t < from || s.t >= to {
			continue
		}
		n++
		all[s.where]++
		if g := m.gs[s.g]; g != nil && g.root == actorRoot {
			actor[s.where]++
			onActors++
		}
	}
	if n == 0 {
		return // no CPU profile ran beside the trace
	}
	fmt.Fprintf(w, "    CPU profile samples in the request: %d, %d of them on the device actors\n", n, onActors)
	if len(actor) > 0 {
		fmt.Fprintln(w, "    the actors' most frequent:")
		for _, kv := range top(actor, 5) {
			fmt.Fprintf(w, "      %5d  %s\n", kv.d, short(kv.k))
		}
	}
	fmt.Fprintln(w, "    every goroutine's most frequent:")
	for _, kv := range top(all, 5) {
		fmt.Fprintf(w, "      %5d  %s\n", kv.d, short(kv.k))
	}
}

type edge struct {
	t trace.Time
	d int
}

// peak is the most intervals open at once.
func peak(edges []edge) int {
	slices.SortFunc(edges, func(a, b edge) int {
		if c := cmp.Compare(a.t, b.t); c != 0 {
			return c
		}
		return cmp.Compare(a.d, b.d) // ends before begins at one instant
	})
	n, most := 0, 0
	for _, e := range edges {
		n += e.d
		most = max(most, n)
	}
	return most
}

type kv[V cmp.Ordered] struct {
	k string
	d V
}

// top is m's n largest entries, largest first.
func top[V cmp.Ordered](m map[string]V, n int) []kv[V] {
	out := make([]kv[V], 0, len(m))
	for k, d := range m {
		out = append(out, kv[V]{k, d})
	}
	slices.SortFunc(out, func(a, b kv[V]) int {
		if c := cmp.Compare(b.d, a.d); c != 0 {
			return c
		}
		return cmp.Compare(a.k, b.k)
	})
	return out[:min(n, len(out))]
}

// short drops the module path from the function names in f.
func short(f string) string {
	return strings.ReplaceAll(f, "github.com/gpuactor/gpuactor/", "")
}
