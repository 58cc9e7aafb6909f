package apisurface

import (
	"flag"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/*.txt from the current API")

// publicPackages are the packages users import.
var publicPackages = []string{"actor", "cuda", "cudaerr", "device", "streams", "alloc", "graphs", "group", "supervise", "interop",
	"sim", "isolate", "textures", "collective"}

const module = "github.com/gpuactor/gpuactor/"

// TestPublicSurface lists every exported name of each public package, with the method set
// (promoted methods included) of every exported type and of a pointer to it, and compares the
// list with testdata/<pkg>.txt. A change to the public API fails here until the list is
// rewritten with -update and the diff reviewed.
func TestPublicSurface(t *testing.T) {
	imp := sourceImporter(t)
	for _, name := range publicPackages {
		t.Run(name, func(t *testing.T) {
			pkg, err := imp.Import(module + name)
			require.NoError(t, err)
			got := surface(pkg)
			file := filepath.Join("testdata", name+".txt")
			if *update {
				require.NoError(t, os.WriteFile(file, []byte(got), 0o644))
				return
			}
			want, err := os.ReadFile(file)
			require.NoError(t, err, "run go test ./internal/apisurface -update to write it")
			added, removed := lineDiff(string(want), got)
			assert.Empty(t, added, "new in the public API of %s: if meant, rewrite %s with -update", name, file)
			assert.Empty(t, removed, "gone from the public API of %s: if meant, rewrite %s with -update", name, file)
		})
	}
}

// TestNoInternalTypesInSignatures checks that no exported function or method of a public
// package takes or returns a type of an internal package: a user could not name it, and it
// would be plumbing in the docs.
func TestNoInternalTypesInSignatures(t *testing.T) {
	imp := sourceImporter(t)
	for _, name := range publicPackages {
		pkg, err := imp.Import(module + name)
		require.NoError(t, err)
		scope := pkg.Scope()
		for _, n := range scope.Names() {
			obj := scope.Lookup(n)
			if !obj.Exported() {
				continue
			}
			if f, ok := obj.(*types.Func); ok {
				assert.Empty(t, internalIn(f.Type()), "%s.%s", name, n)
			}
			tn, ok := obj.(*types.TypeName)
			if !ok {
				continue
			}
			for _, ms := range []*types.MethodSet{types.NewMethodSet(tn.Type()), types.NewMethodSet(types.NewPointer(tn.Type()))} {
				for m := range ms.Methods() {
					if m.Obj().Exported() {
						assert.Empty(t, internalIn(m.Type()), "%s.%s.%s", name, n, m.Obj().Name())
					}
				}
			}
		}
	}
}

// sourceImporter reads the packages' compiled export data, which `go list -export` builds (or
// finds in the build cache): type-checking them and their dependencies from source took most
// of the test command's time under the race detector. It takes a Go toolchain: where there is
// none (a GPU host running packed test binaries) the tests skip.
func sourceImporter(t *testing.T) types.Importer {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to type-check the packages' source with")
	}
	imp, err := exportImporter()
	require.NoError(t, err)
	return imp
}

// exportImporter is one importer for every test, so each package is read once.
var exportImporter = sync.OnceValues(func() (types.Importer, error) {
	args := []string{"list", "-export", "-deps", "-f", "{{if .Export}}{{.ImportPath}}={{.Export}}{{end}}"}
	for _, name := range publicPackages {
		args = append(args, module+name)
	}
	cmd := exec.Command("go", args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -export: %w", err)
	}
	exports := map[string]string{}
	for line := range strings.Lines(string(out)) {
		if path, file, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
			exports[path] = file
		}
	}
	return importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	}), nil
})

// internalIn lists the internal packages a signature's parameter and result types name.
func internalIn(t types.Type) []string {
	sig, ok := t.(*types.Signature)
	if !ok {
		return nil
	}
	var out []string
	for _, tuple := range []*types.Tuple{sig.Params(), sig.Results()} {
		for v := range tuple.Variables() {
			s := types.TypeString(v.Type(), nil)
			if strings.Contains(s, "/internal/") {
				out = append(out, s)
			}
		}
	}
	return out
}

// surface is the package's exported API, one line a name, sorted.
func surface(pkg *types.Package) string {
	qual := types.RelativeTo(pkg)
	var lines []string
	scope := pkg.Scope()
	for _, n := range scope.Names() {
		obj := scope.Lookup(n)
		if !obj.Exported() {
			continue
		}
		switch o := obj.(type) {
		case *types.Func:
			lines = append(lines, "func "+n+strings.TrimPrefix(types.TypeString(o.Type(), qual), "func"))
		case *types.Const:
			lines = append(lines, "const "+n+" "+types.TypeString(o.Type(), qual))
		case *types.Var:
			lines = append(lines, "var "+n+" "+types.TypeString(o.Type(), qual))
		case *types.TypeName:
			kind := "type"
			if o.IsAlias() {
				kind = "alias"
			}
			lines = append(lines, fmt.Sprintf("%s %s %s", kind, n, underlying(o, qual)))
			seen := map[string]bool{}
			for _, ms := range []*types.MethodSet{types.NewMethodSet(o.Type()), types.NewMethodSet(types.NewPointer(o.Type()))} {
				for m := range ms.Methods() {
					if !m.Obj().Exported() || seen[m.Obj().Name()] {
						continue
					}
					seen[m.Obj().Name()] = true
					lines = append(lines, fmt.Sprintf("method %s.%s%s", n, m.Obj().Name(),
						strings.TrimPrefix(types.TypeString(m.Type(), qual), "func")))
				}
			}
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n") + "\n"
}

// underlying describes a type's kind: its exported fields for a struct, "interface" with its
// method count, or its underlying type.
func underlying(o *types.TypeName, qual types.Qualifier) string {
	switch u := o.Type().Underlying().(type) {
	case *types.Struct:
		var fields []string
		for f := range u.Fields() {
			if f.Exported() {
				fields = append(fields, f.Name()+" "+types.TypeString(f.Type(), qual))
			}
		}
		return "struct{" + strings.Join(fields, "; ") + "}"
	case *types.Interface:
		return types.TypeString(u, qual)
	default:
		return types.TypeString(u, qual)
	}
}

// lineDiff lists the lines of got that want lacks, and the lines of want that got lacks.
func lineDiff(want, got string) (added, removed []string) {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for _, l := range g {
		if !slices.Contains(w, l) {
			added = append(added, l)
		}
	}
	for _, l := range w {
		if !slices.Contains(g, l) {
			removed = append(removed, l)
		}
	}
	return added, removed
}
