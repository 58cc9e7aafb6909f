package alloc

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/gpuactor/gpuactor/internal/core"
)

// elemSize is sizeof(T), or an ErrElemType error when T cannot live in device memory: the GPU
// copies bytes, so a T holding a Go pointer (pointer, slice, string, map, interface…) would
// carry addresses the device cannot follow and the garbage collector cannot see.
func elemSize[T any]() (uintptr, error) {
	var zero T
	t := reflect.TypeOf(&zero).Elem()
	if !plain(t) {
		return 0, fmt.Errorf("%w: %s holds pointers (only numbers, arrays and structs of them)", ErrElemType, t)
	}
	size := unsafe.Sizeof(zero)
	if size == 0 {
		return 0, fmt.Errorf("%w: %s has size 0", ErrElemType, t)
	}
	return size, nil
}

func plain(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return true
	case reflect.Array:
		return plain(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if !plain(t.Field(i).Type) {
				return false
			}
		}
		return true
	}
	return false
}

// byteCount is n elements of size bytes, or an error when n is not positive or overflows.
func byteCount(what string, n int, size uintptr) (uint64, error) {
	if n <= 0 {
		return 0, core.Invalid("%s of %d elements", what, n)
	}
	total := uint64(n) * uint64(size)
	if total/uint64(size) != uint64(n) {
		return 0, core.Invalid("%s of %d elements of %d bytes overflows", what, n, size)
	}
	return total, nil
}
