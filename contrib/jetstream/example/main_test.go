package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDemo runs the example as its one command does: an embedded server, a worker over two
// simulated devices and the HTTP service, in one process.
func TestDemo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, run(ctx, config{role: "all", sim: 2, demo: 50, store: t.TempDir()}))
}

func TestBadFlags(t *testing.T) {
	require.ErrorContains(t, run(context.Background(), config{role: "boss"}), `-role "boss"`)
	require.ErrorContains(t, run(context.Background(), config{role: "worker"}), "needs -url")
	require.ErrorContains(t, run(context.Background(), config{role: "worker", url: "nats://127.0.0.1:1", tlsCert: "c.pem"}), "go together")
}
