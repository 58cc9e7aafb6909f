package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	js "github.com/gpuactor/gpuactor/contrib/jetstream"
)

// serve runs the HTTP service until ctx ends, or, with -demo, sends it that many requests,
// checks every answer and returns.
func serve(ctx context.Context, c config, client *js.Client) error {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /reverse", func(w http.ResponseWriter, r *http.Request) {
		in, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
			return
		}
		// The request's context: a client that goes away cancels its job.
		jctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
		defer cancel()
		out, err := client.Submit(jctx, js.Job{Handler: "reverse", Input: in}).Wait(jctx)
		switch {
		case errors.Is(err, js.ErrUnknownHandler):
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
		case errors.Is(err, js.ErrTooLarge):
			http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
		case err != nil:
			http.Error(w, err.Error(), http.StatusBadGateway)
		default:
			_, _ = w.Write(out)
		}
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	addr := c.http
	if c.demo > 0 {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	defer func() { _ = srv.Shutdown(context.WithoutCancel(ctx)) }()
	if c.demo == 0 {
		fmt.Printf("serving POST http://%s/reverse\n", ln.Addr())
		select {
		case <-ctx.Done():
			return nil
		case err := <-done:
			return err
		}
	}
	return demo(ctx, "http://"+ln.Addr().String(), c.demo)
}

// demo sends n requests at once to the service and checks each answer.
func demo(ctx context.Context, base string, n int) error {
	start := time.Now()
	errs := make(chan error, n)
	for i := range n {
		go func() {
			in := fmt.Sprintf("request %04d", i)
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/reverse", strings.NewReader(in))
			if err != nil {
				errs <- err
				return
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			out, err := io.ReadAll(resp.Body)
			if err == nil && (resp.StatusCode != http.StatusOK || string(out) != reversed(in)) {
				err = fmt.Errorf("%q: %s %q", in, resp.Status, out)
			}
			errs <- err
		}()
	}
	var all []error
	for range n {
		if err := <-errs; err != nil {
			all = append(all, err)
		}
	}
	if len(all) > 0 {
		return fmt.Errorf("%d of %d requests failed: %w", len(all), n, errors.Join(all...))
	}
	fmt.Printf("%d requests served through JetStream in %v, every answer checked\n", n, time.Since(start).Round(time.Millisecond))
	return nil
}

func reversed(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}
