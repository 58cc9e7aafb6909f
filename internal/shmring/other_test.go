//go:build !(linux && (amd64 || arm64))

package shmring

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestUnsupported(t *testing.T) {
	r, err := New(0)
	assert.Nil(t, r)
	assert.ErrorIs(t, err, ErrUnsupported)
	assert.True(t, errors.Is(err, errors.ErrUnsupported))
	assert.ErrorContains(t, err, "not supported on this OS")
	_, err = Open(nil)
	assert.ErrorIs(t, err, ErrUnsupported)
}
