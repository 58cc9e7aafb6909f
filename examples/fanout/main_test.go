package main

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// simConfig is a small batch on four simulated devices with parked actors: four spinning
// actors would starve the test of a small machine's cores.
func simConfig(jobs int) config {
	return config{jobs: jobs, n: 4096, rounds: 4, perDevice: 2, policy: "least", sim: 4, slow: 1,
		park: true, tick: 5 * time.Millisecond, plain: 5 * time.Millisecond}
}

// TestRun runs a batch on four simulated devices under each policy: every job passes its
// check, every device takes some, and the output is the plain one (a buffer is no terminal)
// with the summary at its end.
func TestRun(t *testing.T) {
	for _, policy := range []string{"least", "rr", "memory"} {
		t.Run(policy, func(t *testing.T) {
			c := simConfig(300)
			c.policy = policy
			var out bytes.Buffer
			require.NoError(t, run(context.Background(), c, &out))
			text := out.String()
			t.Log("\n" + text)

			assert.NotContains(t, text, "\x1b", "no escapes when the output is not a terminal")
			assert.Contains(t, text, "progress: 300/300 jobs", "the plain mode's last line shows the batch's end")
			assert.Contains(t, text, "summary: 300 jobs, 300 done, 0 failed, 0 cut short, 0 not run")
			total := 0
			for ord := range 4 {
				m := regexp.MustCompile(`(?m)^  GPU` + strconv.Itoa(ord) + `: (\d+) jobs \(`).FindStringSubmatch(text)
				require.NotNil(t, m, "device %d's summary line", ord)
				n, err := strconv.Atoi(m[1])
				require.NoError(t, err)
				assert.Positive(t, n, "device %d got no work", ord)
				total += n
			}
			assert.Equal(t, 300, total)
		})
	}
}

// TestRunStopsWhenCancelled cancels a batch far too big to finish once part of it has run:
// run stops soon, with ctx's error, the summary printed and nothing failed by its result.
func TestRunStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &syncBuffer{}
	out.onWrite = func(s string) {
		if strings.HasPrefix(s, "progress: ") && !strings.HasPrefix(s, "progress: 0/") {
			cancel() // some jobs have finished: the batch is under way
		}
	}
	start := time.Now()
	err := run(ctx, simConfig(1_000_000), out)
	require.ErrorIs(t, err, context.Canceled)
	assert.Less(t, time.Since(start), 10*time.Second)
	text := out.String()
	t.Log("\n" + text)
	m := regexp.MustCompile(`summary: 1000000 jobs, (\d+) done, 0 failed, \d+ cut short, (\d+) not run`).FindStringSubmatch(text)
	require.NotNil(t, m, "the summary, with no job failed by its result")
	done, _ := strconv.Atoi(m[1])
	notRun, _ := strconv.Atoi(m[2])
	assert.Positive(t, done)
	assert.Positive(t, notRun)
}

// TestRunCancelledBeforeStart: an ended context stops run before any device work.
func TestRunCancelledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	require.ErrorIs(t, run(ctx, simConfig(10), &out), context.Canceled)
}

func TestRunRefusesBadFlags(t *testing.T) {
	for _, bad := range []struct {
		edit func(*config)
		says string
	}{
		{func(c *config) { c.jobs = 0 }, "-jobs"},
		{func(c *config) { c.n = -1 }, "-n"},
		{func(c *config) { c.policy = "random" }, "-policy"},
		{func(c *config) { c.Backend = "cuda" }, "-sim"},
	} {
		c := simConfig(10)
		bad.edit(&c)
		err := run(context.Background(), c, &bytes.Buffer{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), bad.says)
	}
}

// TestMix checks the kernel's arithmetic against values worked out by hand for one round, so
// that the Go twin (which the simulator runs and the check uses) is the C++ kernel's.
func TestMix(t *testing.T) {
	assert.Equal(t, uint32(7), mix(7, 123, 0), "no rounds: the input")
	v := uint32(1) ^ 5 // v ^= key + 0
	v *= 0x9E3779B1    // wraps at 32 bits, as unsigned int does in C++
	v ^= v >> 15       // logical shift: v is unsigned
	assert.Equal(t, v, mix(1, 5, 1))
	assert.NotEqual(t, input(1, 8), input(2, 8), "jobs get distinct inputs")
	assert.Equal(t, input(3, 8), input(3, 8), "and the same on every run")
}

// syncBuffer is a bytes.Buffer safe to read while run writes, which calls onWrite with every
// write: the test's hook to act once the progress shows a state.
type syncBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	onWrite func(string)
}

// Write appends p and hands it to onWrite.
func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	n, err := b.buf.Write(p)
	b.mu.Unlock()
	if b.onWrite != nil {
		b.onWrite(string(p))
	}
	return n, err
}

// String is everything written so far.
func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
