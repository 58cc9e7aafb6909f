package group

import (
	"context"
	"sync"
)

// batch holds the outcome of the jobs of Go until Wait. It is the Completer of every job of
// Go: the job's future tells it its result as it completes, so no goroutine waits on a job.
type batch struct {
	wg      sync.WaitGroup
	mu      sync.Mutex
	first   error
	cancels []context.CancelCauseFunc // of BatchContext's contexts, until Wait
}

// Completed records err, if it is the batch's first, and cancels the batch's contexts with
// it. It runs on the goroutine that completes a job, before the job's waiters wake.
func (b *batch) Completed(_ struct{}, err error) {
	defer b.wg.Done()
	if err == nil {
		return
	}
	b.mu.Lock()
	if b.first != nil {
		b.mu.Unlock()
		return
	}
	b.first = err
	cancels := b.cancels
	b.mu.Unlock()
	for _, cancel := range cancels {
		// Cancelling starts each context's AfterFuncs (a queued job's cancellation) on
		// goroutines of their own: nothing here waits.
		cancel(err)
	}
}

// Go submits job as Submit does and keeps its outcome for Wait, errgroup-style: Wait returns
// the first error of the jobs started with Go since the last Wait. Go costs no goroutine:
// the job's completion records its error. Give the jobs a context from BatchContext for the
// first error to cancel the rest.
func (g *Group) Go(ctx context.Context, fn Job, opts ...JobOption) {
	g.batch.wg.Add(1) // before the job can complete: Submit may refuse it at once
	g.submit(ctx, fn, opts, &g.batch)
}

// BatchContext returns a context derived from ctx that is cancelled, with the error as its
// cause (context.Cause), once a job started with Go fails, or else when Wait returns, as
// errgroup.WithContext's is. Jobs started with Go under it then stop: those still queued
// leave the queue with the context's error, and running ones see their context end. Wait
// still returns the first error, not the cancellation of the jobs it stopped. A job of the
// batch that failed before BatchContext was called cancels the new context at once.
func (g *Group) BatchContext(ctx context.Context) context.Context {
	ctx, cancel := context.WithCancelCause(ctx)
	b := &g.batch
	b.mu.Lock()
	first := b.first
	b.cancels = append(b.cancels, cancel)
	b.mu.Unlock()
	if first != nil {
		cancel(first)
	}
	return ctx
}

// Wait waits for every job started with Go, and returns the first error among them (nil when
// all succeeded), clearing it for the next batch and cancelling the contexts BatchContext
// returned for this one.
func (g *Group) Wait() error {
	b := &g.batch
	b.wg.Wait()
	b.mu.Lock()
	err, cancels := b.first, b.cancels
	b.first, b.cancels = nil, nil
	b.mu.Unlock()
	for _, cancel := range cancels {
		cancel(nil)
	}
	return err
}
