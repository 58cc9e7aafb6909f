package main

import (
	"fmt"
	"go/types"
	"sort"
	"strings"
)

// wire writes the code that carries Go values through enc and dec (internal/remote/wire.go):
// scalars as 8 bytes, strings and byte slices with their length, fixed byte arrays as they
// are, structs field by field and other slices as a count and their elements. A struct or a
// slice gets a pair of helper functions, written once.
type wire struct {
	imports       map[string]string // path → name of the packages the current file names
	helperImports map[string]string // those the helpers name
	helpers       map[string]string // helper name → its code
}

func newWire() *wire {
	return &wire{imports: map[string]string{}, helperImports: map[string]string{}, helpers: map[string]string{}}
}

// typeName is t as the generated code writes it.
func (w *wire) typeName(t types.Type) string {
	return types.TypeString(t, func(p *types.Package) string {
		w.imports[p.Path()] = p.Name()
		return p.Name()
	})
}

// basicWire is how a basic type crosses: the codec's method suffix (enc.X to write, dec.X to
// read) and the Go type that method carries; ok is false for a basic type that cannot cross.
func basicWire(ut *types.Basic) (method, goType string, ok bool) {
	info := ut.Info()
	switch {
	case ut.Kind() == types.Bool:
		return "bool", "bool", true
	case ut.Kind() == types.String:
		return "str", "string", true
	case ut.Kind() == types.Float32:
		return "f32", "float32", true
	case info&types.IsUnsigned != 0 && ut.Kind() != types.UnsafePointer:
		return "u64", "uint64", true
	case info&types.IsInteger != 0:
		return "i64", "int64", true
	}
	return "", "", false
}

// encode is the statement writing v, of type t, to the encoder e, or an error saying why t
// cannot cross.
func (w *wire) encode(t types.Type, v, e string) (string, error) {
	u := types.Unalias(t)
	switch ut := u.Underlying().(type) {
	case *types.Basic:
		conv := func(write, writeType string) string {
			if w.typeName(t) == writeType {
				return fmt.Sprintf("%s.%s(%s)", e, write, v)
			}
			return fmt.Sprintf("%s.%s(%s(%s))", e, write, writeType, v)
		}
		if method, goType, ok := basicWire(ut); ok {
			return conv(method, goType), nil
		}
	case *types.Slice:
		if isByte(ut.Elem()) {
			return fmt.Sprintf("%s.bytes(%s)", e, v), nil
		}
		name, err := w.helper(t)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("enc%s(%s, %s)", name, e, v), nil
	case *types.Array:
		if isByte(ut.Elem()) {
			return fmt.Sprintf("%s.b = append(%s.b, %s[:]...)", e, e, v), nil
		}
	case *types.Struct:
		name, err := w.helper(t)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("enc%s(%s, %s)", name, e, v), nil
	}
	return "", fmt.Errorf("a %s cannot cross the wire", w.typeName(t))
}

// decode is the expression reading a value of type t from the decoder d.
func (w *wire) decode(t types.Type, d string) (string, error) {
	u := types.Unalias(t)
	tn := w.typeName(t)
	conv := func(read, readType string) string {
		if tn == readType {
			return d + "." + read + "()"
		}
		return fmt.Sprintf("%s(%s.%s())", tn, d, read)
	}
	switch ut := u.Underlying().(type) {
	case *types.Basic:
		if method, goType, ok := basicWire(ut); ok {
			return conv(method, goType), nil
		}
	case *types.Slice:
		if isByte(ut.Elem()) {
			// A copy: the message's bytes are reused once the call returns.
			if _, named := u.(*types.Named); !named {
				return d + ".clone()", nil
			}
			return fmt.Sprintf("%s(%s.clone())", tn, d), nil
		}
		name, err := w.helper(t)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("dec%s(%s)", name, d), nil
	case *types.Array, *types.Struct:
		if a, ok := ut.(*types.Array); ok && !isByte(a.Elem()) {
			break
		}
		name, err := w.helper(t)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("dec%s(%s)", name, d), nil
	}
	return "", fmt.Errorf("a %s cannot cross the wire", tn)
}

func isByte(t types.Type) bool {
	b, ok := types.Unalias(t).(*types.Basic)
	return ok && b.Kind() == types.Byte
}

// helper writes the enc/dec pair of a struct, byte array or slice type, once, and returns the
// name they share after their prefix.
func (w *wire) helper(t types.Type) (string, error) {
	name := w.helperName(t)
	if name == "" {
		return "", fmt.Errorf("a %s cannot cross the wire", w.typeName(t))
	}
	if _, done := w.helpers[name]; done {
		return name, nil
	}
	w.helpers[name] = "" // in progress: a recursive type fails below, not forever
	saved := w.imports
	w.imports = w.helperImports
	defer func() { w.imports = saved }()
	tn := w.typeName(t)
	var b strings.Builder
	switch ut := types.Unalias(t).Underlying().(type) {
	case *types.Struct:
		fmt.Fprintf(&b, "func enc%s(e *enc, v %s) {\n", name, tn)
		for i := range ut.NumFields() {
			f := ut.Field(i)
			if !f.Exported() {
				return "", fmt.Errorf("%s has the unexported field %s", tn, f.Name())
			}
			s, err := w.encode(f.Type(), "v."+f.Name(), "e")
			if err != nil {
				return "", fmt.Errorf("%s.%s: %w", tn, f.Name(), err)
			}
			fmt.Fprintf(&b, "\t%s\n", s)
		}
		fmt.Fprintf(&b, "}\n\nfunc dec%s(d *dec) (v %s) {\n", name, tn)
		for i := range ut.NumFields() {
			f := ut.Field(i)
			s, err := w.decode(f.Type(), "d")
			if err != nil {
				return "", err
			}
			fmt.Fprintf(&b, "\tv.%s = %s\n", f.Name(), s)
		}
		b.WriteString("\treturn v\n}\n")
	case *types.Array:
		fmt.Fprintf(&b, "func dec%s(d *dec) (v %s) {\n\td.fixed(v[:])\n\treturn v\n}\n", name, tn)
	case *types.Slice:
		s, err := w.encode(ut.Elem(), "x", "e")
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "func enc%s(e *enc, v %s) {\n\te.u64(uint64(len(v)))\n\tfor _, x := range v {\n\t\t%s\n\t}\n}\n\n", name, tn, s)
		ds, err := w.decode(ut.Elem(), "d")
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "func dec%s(d *dec) %s {\n\tn := d.count(8)\n\tif n == 0 {\n\t\treturn nil\n\t}\n\tv := make(%s, n)\n\tfor i := range v {\n\t\tv[i] = %s\n\t}\n\treturn v\n}\n", name, tn, tn, ds)
	}
	w.helpers[name] = b.String()
	return name, nil
}

// helperName names a type's helpers: its own name, or List and its element's name.
func (w *wire) helperName(t types.Type) string {
	switch tt := t.(type) {
	case *types.Named:
		return tt.Obj().Name()
	case *types.Alias:
		return tt.Obj().Name()
	case *types.Slice:
		if e := w.helperName(tt.Elem()); e != "" {
			return "List" + e
		}
	case *types.Basic:
		return strings.ToUpper(tt.Name()[:1]) + tt.Name()[1:]
	}
	return ""
}

// helperCode is every helper, sorted by name.
func (w *wire) helperCode() string {
	names := make([]string, 0, len(w.helpers))
	for n := range w.helpers {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		b.WriteString(w.helpers[n])
		b.WriteString("\n")
	}
	return b.String()
}
