//go:build linux

package worker_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpuactor/gpuactor/internal/testproc"
	"github.com/gpuactor/gpuactor/internal/worker"
)

// modeVar picks the worker's behaviour in this test binary, which is its own worker.
const modeVar = "WORKER_TEST_MODE"

func TestMain(m *testing.M) {
	switch os.Getenv(modeVar) { // set only in workers, through WithEnv
	case "exit-now": // a worker that dies before its hello
		fmt.Fprintln(os.Stderr, "test worker: exiting at once, as asked")
		os.Exit(3)
	case "no-hello": // a worker that hangs before its hello
		time.Sleep(time.Hour)
	}
	worker.Main(serve)
	// A race-detecting binary sleeps a second at exit (GORACE atexit_sleep_ms) to let other
	// threads report; the workers this test binary starts need not.
	if _, ok := os.LookupEnv("GORACE"); !ok {
		_ = os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	code := m.Run()
	if kids := testproc.Children(); len(kids) > 0 && code == 0 {
		fmt.Fprintf(os.Stderr, "child processes left after the tests: %v\n", kids)
		code = 1
	}
	os.Exit(code)
}

// serve is the test worker's role: commands by prefix, anything else echoed.
func serve(ctx context.Context, c *worker.Conn) error {
	var opts []worker.ServeOption
	switch os.Getenv(modeVar) {
	case "codec":
		opts = append(opts, worker.ServeCodec(testCodec{}))
	case "parent": // a worker that starts a worker of its own (the "spawn" command)
		var child *worker.Process
		defer func() {
			if child != nil {
				_ = child.Close()
			}
		}()
		return c.Serve(ctx, func(ctx context.Context, req []byte) ([]byte, error) {
			if string(req) != "spawn" {
				return req, nil
			}
			var err error
			child, err = worker.Start(ctx)
			if err != nil {
				return nil, err
			}
			return []byte(strconv.Itoa(child.Pid())), nil
		})
	}
	var count atomic.Int64
	return c.Serve(ctx, func(ctx context.Context, req []byte) ([]byte, error) {
		cmd, arg, _ := strings.Cut(string(req), ":")
		switch cmd {
		case "sleep": // until the duration passed, or the worker is told to go
			d, err := time.ParseDuration(arg)
			if err != nil {
				return nil, err
			}
			select {
			case <-time.After(d):
				return []byte("slept"), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		case "block": // forever, deaf to ctx: a stuck call
			select {}
		case "fail":
			code, _ := strconv.ParseInt(arg, 10, 64)
			if code == 0 {
				return nil, errors.New("plain failure")
			}
			return nil, &worker.RemoteError{Code: code, Message: "failure " + arg}
		case "big":
			n, _ := strconv.Atoi(arg)
			return make([]byte, n), nil
		case "crash-in": // exit 7 after the duration, whatever is being served
			d, err := time.ParseDuration(arg)
			if err != nil {
				return nil, err
			}
			time.AfterFunc(d, func() {
				fmt.Fprintln(os.Stderr, "test worker: crashing, as asked")
				os.Exit(7)
			})
			return nil, nil
		case "count":
			return []byte(strconv.FormatInt(count.Add(1), 10)), nil
		case "pid":
			return []byte(strconv.Itoa(os.Getpid())), nil
		}
		return req, nil
	}, opts...)
}

// errSentinel travels as code 42 through testCodec.
var errSentinel = errors.New("the sentinel")

// testCodec maps errSentinel to code 42 and back, as the CUDA layer will map cudaerr values.
type testCodec struct{}

func (testCodec) Encode(err error) (int64, string) {
	if re, ok := errors.AsType[*worker.RemoteError](err); ok && re.Code == 42 {
		return 42, re.Message
	}
	return worker.DefaultCodec{}.Encode(err)
}

func (testCodec) Decode(code int64, msg string) error {
	if code == 42 {
		return fmt.Errorf("%w: %s", errSentinel, msg)
	}
	return worker.DefaultCodec{}.Decode(code, msg)
}
