package main

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// contract is what the generator reads: the backend's Device methods with their directives,
// and the hand-written hooks of package remote.
type contract struct {
	pkg        *types.Package // internal/backend
	methods    []*types.Func  // backend.Device's methods, sorted by name
	directives map[string]map[string]bool

	handClient map[string]bool   // methods of *Device written by hand
	serveHooks map[string]bool   // X for each (*server).serveX
	hookFile   map[string]string // "Device.X" or "server.serveX" → the file it is written in
	referenced map[string]bool   // mX identifiers the hand-written code names
}

// load reads internal/backend (next to dir, the remote package) and the hooks in dir.
func load(dir string) (*contract, error) {
	c := &contract{directives: map[string]map[string]bool{}, handClient: map[string]bool{}, serveHooks: map[string]bool{}, referenced: map[string]bool{}, hookFile: map[string]string{}}
	fset := token.NewFileSet()
	bdir := filepath.Join(dir, "..", "backend")
	files, err := parseDir(fset, bdir, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	pkg, err := conf.Check("github.com/gpuactor/gpuactor/internal/backend", fset, files, nil)
	if err != nil {
		return nil, fmt.Errorf("type-checking %s: %w", bdir, err)
	}
	c.pkg = pkg
	obj := pkg.Scope().Lookup("Device")
	if obj == nil {
		return nil, fmt.Errorf("%s has no Device", bdir)
	}
	iface, ok := obj.Type().Underlying().(*types.Interface)
	if !ok {
		return nil, fmt.Errorf("backend.Device is not an interface")
	}
	for i := range iface.NumMethods() {
		c.methods = append(c.methods, iface.Method(i))
	}
	sort.Slice(c.methods, func(i, j int) bool { return c.methods[i].Name() < c.methods[j].Name() })
	for _, f := range files {
		collectDirectives(f, c.directives)
	}

	rfset := token.NewFileSet()
	rfiles, err := parseDir(rfset, dir, 0)
	if err != nil {
		return nil, err
	}
	for _, f := range rfiles {
		c.collectHooks(f, filepath.Base(rfset.Position(f.Package).Filename))
	}
	return c, nil
}

// parseDir parses the package's non-test, non-generated Go files.
func parseDir(fset *token.FileSet, dir string, mode parser.Mode) ([]*ast.File, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") || strings.HasSuffix(n, "_gen.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, mode)
		if err != nil {
			return nil, err
		}
		if !buildsHere(f) {
			continue
		}
		files = append(files, f)
	}
	return files, nil
}

// buildsHere drops files constrained to another OS than linux; the wire is the same on each.
func buildsHere(f *ast.File) bool {
	for _, cg := range f.Comments {
		if cg.Pos() > f.Package {
			break
		}
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "//go:build ") && strings.Contains(c.Text, "!linux") {
				return false
			}
		}
	}
	return true
}

// collectDirectives reads the //remote: lines of every interface method's doc comment.
func collectDirectives(f *ast.File, into map[string]map[string]bool) {
	ast.Inspect(f, func(n ast.Node) bool {
		it, ok := n.(*ast.InterfaceType)
		if !ok {
			return true
		}
		for _, m := range it.Methods.List {
			if m.Doc == nil || len(m.Names) == 0 {
				continue
			}
			for _, c := range m.Doc.List {
				if d, ok := strings.CutPrefix(c.Text, "//remote:"); ok {
					for _, name := range m.Names {
						if into[name.Name] == nil {
							into[name.Name] = map[string]bool{}
						}
						into[name.Name][strings.TrimSpace(d)] = true
					}
				}
			}
		}
		return true
	})
}

// collectHooks notes a hand-written file's *Device methods, serve hooks and method ids.
func (c *contract) collectHooks(f *ast.File, file string) {
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv == nil || len(fd.Recv.List) != 1 {
			continue
		}
		star, ok := fd.Recv.List[0].Type.(*ast.StarExpr)
		if !ok {
			continue
		}
		id, ok := star.X.(*ast.Ident)
		if !ok {
			continue
		}
		switch id.Name {
		case "Device":
			c.handClient[fd.Name.Name] = true
			c.hookFile["Device."+fd.Name.Name] = file
		case "server":
			if x, ok := strings.CutPrefix(fd.Name.Name, "serve"); ok && x != "" && x[0] >= 'A' && x[0] <= 'Z' {
				c.serveHooks[x] = true
				c.hookFile["server."+fd.Name.Name] = file
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && len(id.Name) > 1 && id.Name[0] == 'm' && id.Name[1] >= 'A' && id.Name[1] <= 'Z' {
			c.referenced[id.Name[1:]] = true
		}
		return true
	})
}
