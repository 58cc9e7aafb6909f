package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeTree writes a backend package and a remote package side by side and returns the
// remote's directory.
func fakeTree(t *testing.T, backend string, remote map[string]string) string {
	t.Helper()
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "backend"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "remote"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "backend", "backend.go"), []byte(backend), 0o644))
	for name, src := range remote {
		require.NoError(t, os.WriteFile(filepath.Join(root, "remote", name), []byte(src), 0o644))
	}
	return filepath.Join(root, "remote")
}

const fakeBackend = `package backend

type Stream uintptr

type Pair struct {
	A    int32
	Name string
}

type Device interface {
	// Launch queues work.
	//remote:posted
	Launch(n int, s Stream) error
	// Count holds its result when it fails.
	//remote:inline
	Count(s Stream) (int, error)
	Pairs(in []Pair) ([]Pair, error)
	Hook(fn func()) error
	Ordinal() int
}
`

func TestGenerateNamesWhatNeedsAHook(t *testing.T) {
	dir := fakeTree(t, fakeBackend, map[string]string{"doc.go": "package remote\n"})
	_, err := Generate(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "(*Device).Hook")
	assert.Contains(t, err.Error(), "cannot cross the wire")
	assert.Contains(t, err.Error(), "write it by hand")
}

func TestGenerateFromAContract(t *testing.T) {
	dir := fakeTree(t, fakeBackend, map[string]string{
		"doc.go": "package remote\n",
		"hooks.go": `package remote

func (d *Device) Hook(fn func()) error { return nil }
func (d *Device) Ordinal() int         { return 0 }
func (s *server) serveBoard(in *dec, out *enc) error { return nil }
`,
	})
	files, err := Generate(dir)
	require.NoError(t, err)
	ids, client, serve := string(files["methods_gen.go"]), string(files["client_gen.go"]), string(files["serve_gen.go"])

	// Ids for what crosses: the generated methods and the serve hook, in name order; none for
	// the hand-written methods that name no id.
	assert.Regexp(t, `(?s)mBoard\s+mCount\s+mLaunch\s+mPairs\s+numMethods`, ids)
	assert.NotContains(t, ids, "mHook")
	assert.NotContains(t, ids, "mOrdinal")

	assert.Contains(t, client, "e := posted(mLaunch, a1)")
	assert.Contains(t, client, "return v0, r.inline()")
	assert.Contains(t, client, "encListPair(&e, a0)")
	assert.NotContains(t, client, "func (d *Device) Hook")

	assert.Contains(t, serve, "mLaunch: {(*server).callLaunch, true}")
	assert.Contains(t, serve, "mBoard:  {(*server).serveBoard, false}")
	assert.Contains(t, serve, "return inline(out, err)")
	assert.Contains(t, serve, "v.Name = d.str()")
	for name, src := range files {
		assert.True(t, strings.HasPrefix(string(src), "// Code generated "), name)
		assert.Contains(t, string(src), "DO NOT EDIT.", name)
	}
}
