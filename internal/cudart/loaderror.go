package cudart

import (
	"errors"
	"fmt"
	"strings"
)

// ErrLibraryNotFound is wrapped by every *LoadError.
var ErrLibraryNotFound = errors.New("library not found")

// Attempt is one place the loader looked.
type Attempt struct {
	Step string // the search step, e.g. "soname", "$CUDA_HOME", "pip wheel"
	Path string // the file, soname or directory tried
	Err  string // why it did not load: dlerror's text, or why the path was skipped
}

// LoadError reports that no copy of a library could be loaded, with every path tried.
type LoadError struct {
	Library  string // "libcudart" or "libnvrtc"
	Attempts []Attempt
}

// Error implements error. It lists every attempt, one a line.
func (e *LoadError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cudart: cannot load %s; tried %d paths:", e.Library, len(e.Attempts))
	for _, a := range e.Attempts {
		fmt.Fprintf(&b, "\n  [%s] %s: %s", a.Step, a.Path, a.Err)
	}
	return b.String()
}

// Unwrap returns ErrLibraryNotFound.
func (e *LoadError) Unwrap() error { return ErrLibraryNotFound }
