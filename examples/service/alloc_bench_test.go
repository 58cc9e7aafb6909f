package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// BenchmarkRequest is one client's 16 KiB saxpy requests, one after another, against the
// service on one simulated isolated device: its allocations a request are the whole
// process's (client, HTTP server, group, device), the garbage behind the service's GC cycles.
func BenchmarkRequest(b *testing.B) {
	ctx := context.Background()
	c := testConfig(b)
	c.sim, c.perDevice = 1, 8
	srv := httptest.NewServer(testService(b, c).handler())
	defer srv.Close()
	c.size = 16 << 10
	for _, client := range []struct {
		name string
		c    *http.Client
	}{{"client=default", srv.Client()}, {"client=load", loadClient(c)}} {
		b.Run(client.name, func(b *testing.B) {
			var m clientMemory
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := call(ctx, client.c, srv.URL, c.size/4, "", 0, i, &m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The load generator's garbage a request is small next to its body: a request of 2×16 KiB
// allocates less than 16 KiB in the whole process against a server that answers from memory
// it keeps (the transport's default 4 KiB write buffer cost a 32 KiB copy buffer a request).
func TestLoadClientGarbage(t *testing.T) {
	if raceOn {
		t.Skip("the race detector drops sync.Pool's items at random: net/http's buffers are made again")
	}
	const size = 16 << 10
	answer := make([]byte, size)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Length", strconv.Itoa(len(answer)))
		_, _ = w.Write(answer)
	}))
	defer srv.Close()
	c := testConfig(t)
	c.size = size
	client := loadClient(c)
	defer client.CloseIdleConnections()
	body := make([]byte, 2*size)
	send := func() {
		resp, err := client.Post(srv.URL, "application/octet-stream", bytes.NewReader(body))
		require.NoError(t, err)
		_, err = io.Copy(io.Discard, resp.Body)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
	}
	for range 10 {
		send() // the connection and the pools' first buffers
	}
	const n = 200
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		send()
	}
	runtime.ReadMemStats(&after)
	perRequest := (after.TotalAlloc - before.TotalAlloc) / n
	assert.Less(t, perRequest, uint64(16<<10), "bytes allocated a request")
}
