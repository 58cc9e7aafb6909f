package nilsafe

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/graphs"
	"github.com/gpuactor/gpuactor/interop"
	"github.com/gpuactor/gpuactor/streams"
)

// handles are nil pointers of every public handle type whose methods the test calls.
var handles = []any{
	(*streams.Stream)(nil),
	(*streams.Event)(nil),
	(*graphs.Graph)(nil),
	(*graphs.Exec)(nil),
	(*graphs.Node)(nil),
	(*graphs.Capturing)(nil),
	(*graphs.Recorder)(nil),
	(*graphs.Template)(nil),
	(*graphs.Staged[float32])(nil),
	(*graphs.UserObject)(nil),
	(*alloc.Buffer[float32])(nil),
	(*alloc.Pinned[float32])(nil),
	(*alloc.Managed[float32])(nil),
	(*alloc.Registered[float32])(nil),
	(*alloc.Pool)(nil),
	(*alloc.PinnedPool)(nil),
	(*device.Buffer)(nil),
	(*device.HostBuffer)(nil),
	(*device.Module)(nil),
	(*device.Kernel)(nil),
	(*device.Device)(nil),
	(*interop.GL)(nil),
	(*interop.GraphicsResource)(nil),
	(*interop.Mapping)(nil),
	(*interop.EGLStreamConsumer)(nil),
	(*interop.EGLStreamFrame)(nil),
	(*interop.EGLStreamProducer)(nil),
}

var (
	errorType  = reflect.TypeFor[error]()
	ctxType    = reflect.TypeFor[context.Context]()
	futureType = reflect.TypeFor[*streams.Future]()
)

// Every exported method of every handle type, called on a nil receiver with zero arguments
// (and a live context), returns rather than panics; where it returns an error or a future,
// that error is a device.ErrInvalidArgument naming the nil thing.
func TestNilReceiversReturnErrors(t *testing.T) {
	for _, h := range handles {
		v := reflect.ValueOf(h)
		typ := v.Type()
		require.Positive(t, typ.NumMethod(), "%v has methods", typ)
		for i := range typ.NumMethod() {
			m := typ.Method(i)
			t.Run(fmt.Sprintf("%v.%s", typ, m.Name), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				out, panicked := call(ctx, v.Method(i))
				require.Nil(t, panicked, "%v.%s panicked on a nil receiver", typ, m.Name)
				for _, r := range out {
					var err error
					switch {
					case r.Type() == futureType:
						f := r.Interface().(*streams.Future)
						require.NotNil(t, f, "a nil future")
						err = f.Wait(ctx)
						require.Error(t, err, "the future completes with an error")
					case r.Type() == errorType:
						if r.IsNil() {
							t.Fatalf("%v.%s returned no error on a nil receiver", typ, m.Name)
						}
						err = r.Interface().(error)
					default:
						continue
					}
					assert.ErrorIs(t, err, device.ErrInvalidArgument)
					assert.Contains(t, err.Error(), "nil", "the error names the nil thing")
					assert.False(t, errors.Is(err, context.DeadlineExceeded), "answered at once, not by the deadline")
				}
			})
		}
	}
}

// call calls fn with zero arguments but ctx for each context, and reports a panic.
func call(ctx context.Context, fn reflect.Value) (out []reflect.Value, panicked any) {
	defer func() { panicked = recover() }()
	ft := fn.Type()
	n := ft.NumIn()
	if ft.IsVariadic() {
		n--
	}
	args := make([]reflect.Value, n)
	for i := range n {
		if in := ft.In(i); in == ctxType {
			args[i] = reflect.ValueOf(ctx)
		} else {
			args[i] = reflect.Zero(in)
		}
	}
	return fn.Call(args), nil
}

// The test covers what it says: every handle type is here once.
func TestHandlesAreDistinct(t *testing.T) {
	seen := map[string]bool{}
	for _, h := range handles {
		name := reflect.TypeOf(h).String()
		assert.False(t, seen[name], name)
		assert.True(t, strings.HasPrefix(name, "*"), name)
		seen[name] = true
	}
}
