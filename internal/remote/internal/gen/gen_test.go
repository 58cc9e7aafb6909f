package main

import (
	"bytes"
	"go/types"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// needGoToolchain skips a test that type-checks the real tree, whose standard-library imports
// need a Go installation: a GPU host running packed test binaries has none.
func needGoToolchain(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command, so no standard library to type-check internal/backend against")
	}
}

// TestGeneratedFilesAreCurrent fails when backend.Device or a hook changed and go generate
// was not run in internal/remote: the committed files must be what the generator writes now.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	needGoToolchain(t)
	files, err := Generate(filepath.Join("..", ".."))
	require.NoError(t, err)
	require.Len(t, files, 3)
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join("..", "..", name))
		require.NoError(t, err, name)
		// Not assert.Equal: its diff of a whole generated file would bury the one line that matters.
		if !bytes.Equal(want, got) {
			t.Errorf("internal/remote/%s is stale: run go generate ./internal/remote", name)
		}
	}
	matches, err := filepath.Glob(filepath.Join("..", "..", "*_gen.go"))
	require.NoError(t, err)
	for _, m := range matches {
		assert.Contains(t, files, filepath.Base(m), "%s is no longer generated: remove it", m)
	}
}

// TestGenerateIsDeterministic guards the ids against map order: two runs write the same bytes.
func TestGenerateIsDeterministic(t *testing.T) {
	needGoToolchain(t)
	a, err := Generate(filepath.Join("..", ".."))
	require.NoError(t, err)
	b, err := Generate(filepath.Join("..", ".."))
	require.NoError(t, err)
	assert.Equal(t, a, b)
}

func TestWireRefusesWhatCannotCross(t *testing.T) {
	w := newWire()
	for _, typ := range []types.Type{
		types.Typ[types.UnsafePointer],
		types.NewSignatureType(nil, nil, nil, nil, nil, false),
		types.NewMap(types.Typ[types.String], types.Typ[types.Int]),
		types.NewPointer(types.Typ[types.Int]),
	} {
		_, err := w.encode(typ, "v", "e")
		assert.ErrorContains(t, err, "cannot cross the wire", typ.String())
		_, err = w.decode(typ, "d")
		assert.ErrorContains(t, err, "cannot cross the wire", typ.String())
	}
	unexported := types.NewNamed(types.NewTypeName(0, nil, "T", nil), types.NewStruct([]*types.Var{types.NewField(0, nil, "x", types.Typ[types.Int], false)}, nil), nil)
	_, err := w.encode(unexported, "v", "e")
	assert.ErrorContains(t, err, "unexported field x")
}

func TestWireCarriesScalarsStringsAndLists(t *testing.T) {
	w := newWire()
	cases := map[types.Type][2]string{
		types.Typ[types.Uint64]:                   {"e.u64(v)", "d.u64()"},
		types.Typ[types.Int]:                      {"e.i64(int64(v))", "int(d.i64())"},
		types.Typ[types.Bool]:                     {"e.bool(v)", "d.bool()"},
		types.Typ[types.String]:                   {"e.str(v)", "d.str()"},
		types.Typ[types.Float32]:                  {"e.f32(v)", "d.f32()"},
		types.NewSlice(types.Typ[types.Byte]):     {"e.bytes(v)", "d.clone()"},
		types.NewSlice(types.Typ[types.Uint32]):   {"encListUint32(e, v)", "decListUint32(d)"},
		types.NewArray(types.Typ[types.Byte], 64): {"e.b = append(e.b, v[:]...)", ""},
	}
	for typ, want := range cases {
		got, err := w.encode(typ, "v", "e")
		require.NoError(t, err, typ.String())
		assert.Equal(t, want[0], got, typ.String())
		if want[1] == "" {
			continue
		}
		got, err = w.decode(typ, "d")
		require.NoError(t, err, typ.String())
		assert.Equal(t, want[1], got, typ.String())
	}
}
