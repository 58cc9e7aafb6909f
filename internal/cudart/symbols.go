package cudart

import (
	"errors"
	"fmt"
	"sync/atomic"
)

// ErrSymbolNotFound is wrapped by every *SymbolError.
var ErrSymbolNotFound = errors.New("symbol not found")

// SymbolError reports a function the loaded library does not export (or, for driver functions,
// that cudaGetDriverEntryPoint could not supply): usually a call newer than the installed runtime.
type SymbolError struct {
	Symbol  string // the C function name, e.g. "cudaLibraryLoadData"
	Library string // the library that was searched, e.g. "/usr/lib/x86_64-linux-gnu/libcudart.so.11.0"
	Version int    // the library's version (CUDA encoding, 11080 for 11.8), 0 when unknown
	Detail  string // extra context, e.g. why the driver did not provide the symbol
}

// Error implements error.
func (e *SymbolError) Error() string {
	s := fmt.Sprintf("cudart: symbol %s not found in %s (version %s)", e.Symbol, e.Library, FormatVersion(e.Version))
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Unwrap returns ErrSymbolNotFound.
func (e *SymbolError) Unwrap() error { return ErrSymbolNotFound }

// FormatVersion renders a CUDA-encoded version (1000*major + 10*minor) as "major.minor".
func FormatVersion(v int) string {
	if v <= 0 {
		return "unknown"
	}
	return fmt.Sprintf("%d.%d", v/1000, (v%1000)/10)
}

// symMissing marks a slot whose symbol is known to be absent.
const symMissing = ^uintptr(0)

// symtab resolves a fixed list of symbols lazily and caches the addresses. It is safe for
// concurrent use: two threads may both resolve a symbol, and both get the same address.
type symtab struct {
	names []string
	addrs []atomic.Uintptr
	// resolve looks a name up. A *SymbolError result is cached as "missing"; any other error is
	// returned without caching (the lookup may succeed later).
	resolve func(name string) (uintptr, error)
}

func newSymtab(names []string, resolve func(string) (uintptr, error)) symtab {
	return symtab{names: names, addrs: make([]atomic.Uintptr, len(names)), resolve: resolve}
}

// get returns the address of symbol id. The fast path is one atomic load.
func (t *symtab) get(id int) (uintptr, error) {
	if a := t.addrs[id].Load(); a != 0 && a != symMissing {
		return a, nil
	}
	return t.slow(id)
}

func (t *symtab) slow(id int) (uintptr, error) {
	a := t.addrs[id].Load()
	if a == symMissing {
		_, err := t.resolve(t.names[id]) // rebuild the error; missing symbols are not hot
		if err == nil {
			err = &SymbolError{Symbol: t.names[id]}
		}
		return 0, err
	}
	addr, err := t.resolve(t.names[id])
	if err != nil {
		var se *SymbolError
		if errors.As(err, &se) {
			t.addrs[id].Store(symMissing)
		}
		return 0, err
	}
	t.addrs[id].Store(addr)
	return addr, nil
}

// has reports whether symbol id resolves.
func (t *symtab) has(id int) bool {
	_, err := t.get(id)
	return err == nil
}
