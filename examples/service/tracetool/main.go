// Command tracetool says what the service's slow requests waited on, from an execution trace
// the service wrote with -trace-slow (slow-N.trace, or the same gzipped). For each of the
// slowest requests in the trace it prints:
//
//   - the request's phases: client to handler, body and queueing before the job, the job
//     (the device work), the answer back;
//   - for each goroutine that served it (the client's, the handler's, the job's): the time it
//     ran, was runnable without a P, waited (on what, where) or sat in a system call, and the
//     library's trace regions inside (gpuactor.await, gpuactor.staging.wait,
//     gpuactor.mailbox.full);
//   - the garbage collector's phases and stop-the-world pauses that overlapped it;
//   - what every goroutine of the process did meanwhile, by the function it started in, the
//     device actors first: whether they were kept from running.
//
// Usage:
//
//	go run ./tracetool [-n 3] [-min 20ms] slow-1.trace [slow-2.trace.gz ...]
package main

import (
	"bufio"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

func main() {
	n := flag.Int("n", 3, "explain the n slowest requests of each trace")
	minLatency := flag.Duration("min", 0, "explain every request at least this slow instead (0: the -n slowest)")
	flag.Parse()
	if flag.NArg() == 0 || *n <= 0 || *minLatency < 0 {
		fmt.Fprintln(os.Stderr, "usage: tracetool [-n N] [-min D] file.trace[.gz]...")
		os.Exit(2)
	}
	failed := false
	for i, name := range flag.Args() {
		if i > 0 {
			fmt.Println()
		}
		fmt.Printf("== %s\n", name)
		if err := analyze(os.Stdout, name, *n, *minLatency); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}

// analyze reads the trace in file name (gzipped when its name ends in .gz) and writes what
// its slow requests waited on to w.
func analyze(w io.Writer, name string, n int, minLatency time.Duration) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	var r io.Reader = bufio.NewReaderSize(f, 1<<20)
	if strings.HasSuffix(name, ".gz") {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return err
		}
		defer zr.Close()
		r = zr
	}
	m, err := parse(r)
	if err != nil {
		return err
	}
	m.report(w, n, minLatency)
	return nil
}
