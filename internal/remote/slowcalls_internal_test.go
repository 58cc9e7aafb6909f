package remote

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// noteSlow names the method of a call at least slowCalls long, and says nothing of a quicker
// one, of a request too short to name its method, or while the diagnostic is off.
func TestNoteSlowNamesSlowCalls(t *testing.T) {
	was := slowCalls
	defer func() { slowCalls = was }()
	e := request(mMallocAsync)
	defer e.recycle()
	var buf bytes.Buffer

	slowCalls = 0
	noteSlow(&buf, "parent: call", e.b, time.Now().Add(-time.Hour))
	assert.Empty(t, buf.String(), "off")

	slowCalls = time.Millisecond
	noteSlow(&buf, "parent: call", e.b, time.Now())
	assert.Empty(t, buf.String(), "a quick call")
	noteSlow(&buf, "parent: call", e.b[:4], time.Now().Add(-time.Second))
	assert.Empty(t, buf.String(), "no method to name")

	noteSlow(&buf, "parent: call", e.b, time.Now().Add(-5*time.Millisecond))
	assert.Regexp(t, `^gpuactor remote: parent: call MallocAsync took [0-9.]+ms\n$`, buf.String())
}
