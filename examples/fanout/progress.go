package main

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/group"
)

// barWidth is the progress bar's width in characters: with the counts after it, a line
// stays under 80 columns, which matters because a wrapped line would throw off the count
// of lines the redraw moves the cursor up over.
const barWidth = 20

// isTerminal reports whether w is a terminal (a character device), where the progress may
// redraw in place with ANSI escapes. TERM=dumb is a terminal that does not understand them.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("TERM") == "dumb" {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&fs.ModeCharDevice != 0
}

// progress shows how far the batch is, from snapshots of the group's Stats. One goroutine
// calls update while the jobs run; finish and summary come after it has stopped.
type progress struct {
	out    io.Writer
	tty    bool
	total  int
	labels []string // each device's name, in the order of the group's Stats
	start  time.Time
	every  time.Duration // the plain mode's period
	last   time.Time     // when the plain mode last printed
	drawn  int           // lines the terminal mode drew last time: the redraw goes up over them
}

// newProgress starts the clock of a batch of total jobs over devs, shown on out: redrawn in
// place when tty, else a line every so often.
func newProgress(out io.Writer, tty bool, total int, devs []*device.Device, every time.Duration) *progress {
	labels := make([]string, len(devs))
	for i, d := range devs {
		labels[i] = fmt.Sprintf("GPU%d", d.Ordinal())
	}
	now := time.Now()
	return &progress{out: out, tty: tty, total: total, labels: labels, start: now, every: every, last: now}
}

// update shows st: on a terminal at every call, otherwise once a period has gone by.
func (p *progress) update(st group.Stats) {
	if p.tty {
		p.redraw(st)
		return
	}
	if now := time.Now(); now.Sub(p.last) >= p.every {
		p.last = now
		p.line(st)
	}
}

// finish shows the final state once more, so that the last progress shown is the batch's end.
func (p *progress) finish(st group.Stats) {
	if p.tty {
		p.redraw(st)
	} else {
		p.line(st)
	}
}

// redraw draws the bar and a line per device over what it drew last time: up over those
// lines, then each one cleared and written anew, so that the block stays put on the screen.
func (p *progress) redraw(st group.Stats) {
	var b strings.Builder
	if p.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", p.drawn)
	}
	finished, _ := counts(st)
	bar := finished * barWidth / p.total
	fmt.Fprintf(&b, "\r\x1b[2K[%s%s] %s", strings.Repeat("#", bar), strings.Repeat(".", barWidth-bar), p.rate(finished))
	if st.Waiting > 0 {
		fmt.Fprintf(&b, "  waiting %d", st.Waiting)
	}
	b.WriteByte('\n')
	for i, d := range st.Devices {
		fmt.Fprintf(&b, "\r\x1b[2K%s done %d running %d queued %d mean %v", p.labels[i], d.Done, d.Running, d.Queued, round(d.MeanJob))
		if d.Failed > 0 {
			fmt.Fprintf(&b, " FAILED %d", d.Failed)
		}
		if !d.Healthy {
			b.WriteString(" (device failed)")
		}
		b.WriteByte('\n')
	}
	p.drawn = 1 + len(st.Devices)
	io.WriteString(p.out, b.String()) // one write: a redraw half done would flicker
}

// line prints one plain progress line: for logs and pipes, where escapes would be noise.
func (p *progress) line(st group.Stats) {
	finished, _ := counts(st)
	var b strings.Builder
	fmt.Fprintf(&b, "progress: %s", p.rate(finished))
	for i, d := range st.Devices {
		fmt.Fprintf(&b, "  %s %d", p.labels[i], d.Done+d.Failed)
	}
	b.WriteByte('\n')
	io.WriteString(p.out, b.String())
}

// rate is "1234/2000 jobs  812 jobs/s  eta 1s": the count, the mean rate since the start, and
// the time left at that rate.
func (p *progress) rate(finished int) string {
	elapsed := time.Since(p.start).Seconds()
	perSec := 0.0
	if elapsed > 0 {
		perSec = float64(finished) / elapsed
	}
	eta := "eta -"
	if perSec > 0 {
		left := time.Duration(float64(p.total-finished) / perSec * float64(time.Second))
		if left < 10*time.Second { // "eta 0s" for the last few seconds would say nothing
			left = left.Round(100 * time.Millisecond)
		} else {
			left = left.Round(time.Second)
		}
		eta = fmt.Sprintf("eta %v", left)
	}
	return fmt.Sprintf("%d/%d jobs  %.0f jobs/s  %s", finished, p.total, perSec, eta)
}

// summary prints the batch's outcome and each device's share of it. Of the jobs the group
// counts failed, bad failed by their result, and the others were cut short by the end of the
// context (Ctrl-C). A job cancelled before it was taken off the queue is in neither count: it
// is "not run".
func (p *progress) summary(st group.Stats, bad int, elapsed time.Duration) {
	finished, failed := counts(st)
	cut := max(0, failed-bad)
	// The rate counts the jobs that ran to their end, passed or not: one cut short at its
	// start by Ctrl-C took the device next to no time, and would inflate it.
	fmt.Fprintf(p.out, "summary: %d jobs, %d done, %d failed, %d cut short, %d not run, in %v: %.0f jobs/s\n",
		p.total, finished-failed, bad, cut, p.total-finished, elapsed.Round(time.Millisecond), float64(finished-cut)/elapsed.Seconds())
	for i, d := range st.Devices {
		n := d.Done + d.Failed
		share := 0.0
		if finished > 0 {
			share = 100 * float64(n) / float64(finished)
		}
		fmt.Fprintf(p.out, "  %s: %d jobs (%.1f%%), %d failed or cut short, mean %v\n", p.labels[i], n, share, d.Failed, round(d.MeanJob))
	}
}

// counts sums the jobs that ended, done or failed, and those that failed, over the devices.
// Each job of the batch runs once (none is Idempotent), so these are counts of jobs.
func counts(st group.Stats) (finished, failed int) {
	for _, d := range st.Devices {
		finished += int(d.Done + d.Failed)
		failed += int(d.Failed)
	}
	return finished, failed
}

// round keeps three significant digits or so of a job's mean time: 2.13ms, not 2.134567ms.
func round(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	case d >= time.Microsecond:
		return d.Round(10 * time.Nanosecond)
	}
	return d
}
