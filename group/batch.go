package group

import (
	"context"
	"sync"
)

// batch holds the jobs of Go until Wait.
type batch struct {
	mu    sync.Mutex
	wg    sync.WaitGroup
	first error
}

// Go submits job as Submit does and keeps its outcome for Wait, errgroup-style: Wait returns
// the first error of the jobs started with Go since the last Wait.
func (g *Group) Go(ctx context.Context, fn Job, opts ...JobOption) {
	f := g.Submit(ctx, fn, opts...)
	g.batch.wg.Add(1)
	go func() {
		defer g.batch.wg.Done()
		if err := f.Wait(context.Background()); err != nil {
			g.batch.mu.Lock()
			if g.batch.first == nil {
				g.batch.first = err
			}
			g.batch.mu.Unlock()
		}
	}()
}

// Wait waits for every job started with Go, and returns the first error among them (nil when
// all succeeded), clearing it for the next batch.
func (g *Group) Wait() error {
	g.batch.wg.Wait()
	g.batch.mu.Lock()
	defer g.batch.mu.Unlock()
	err := g.batch.first
	g.batch.first = nil
	return err
}
