package interop_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// tempFile is a file holding text, closed with the test.
func tempFile(t *testing.T, text string) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "handle"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close() })
	_, err = f.WriteString(text)
	require.NoError(t, err)
	return f
}
