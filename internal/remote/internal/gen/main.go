// Command gen writes the isolated device's wire code from the backend contract: the method
// ids (methods_gen.go), the parent's Device stubs (client_gen.go) and the worker's dispatch
// table (serve_gen.go), all in internal/remote. It reads internal/backend with go/types, so
// adding a method to backend.Device needs no edit in internal/remote.
//
// Run it with go generate in internal/remote (doc.go holds the directive). The hand-written
// special cases it respects, all in internal/remote:
//
//   - a method of *Device written by hand (any non-generated file) is not generated; it keeps
//     a method id only if its code names it (mName), so a refused method crosses nothing;
//   - a method (s *server) serveName handles method Name in the worker instead of the
//     generated handler; Name need not be a backend method (mInfo, mBoard, …);
//   - a //remote:posted line in a backend method's doc comment makes its calls posted
//     (posted.go): sent without waiting, keyed by the method's first Stream argument;
//   - a //remote:inline line makes its results cross together with its error, for a method
//     whose results hold when it fails;
//   - a //remote:startable line also writes startName, which sends the call and returns
//     without its answer, and resultName, which waits for the answer (the call is the two):
//     for a caller that keeps several in flight (startalloc.go).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	dir := flag.String("dir", ".", "the directory of package remote")
	flag.Parse()
	files, err := Generate(*dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	for name, src := range files {
		path := filepath.Join(*dir, name)
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, src) {
			continue
		}
		if err := os.WriteFile(path, src, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
	}
}
