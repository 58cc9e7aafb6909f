package collective

import (
	"reflect"
	"strconv"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// Elem is the element types NCCL reduces and moves: a buffer of another type is a compile
// error. Types defined on these (type Celsius float32) count as their underlying type.
type Elem interface {
	~int8 | ~uint8 | ~int32 | ~uint32 | ~int64 | ~uint64 | ~float32 | ~float64
}

// dataType is T's ncclDataType_t.
func dataType[T Elem]() backend.CollDataType {
	switch reflect.TypeFor[T]().Kind() {
	case reflect.Int8:
		return backend.CollInt8
	case reflect.Uint8:
		return backend.CollUint8
	case reflect.Int32:
		return backend.CollInt32
	case reflect.Uint32:
		return backend.CollUint32
	case reflect.Int64:
		return backend.CollInt64
	case reflect.Uint64:
		return backend.CollUint64
	case reflect.Float32:
		return backend.CollFloat32
	default: // reflect.Float64: Elem admits nothing else
		return backend.CollFloat64
	}
}

// Reduction is how a reduction combines the ranks' elements.
type Reduction int32

// The reductions.
const (
	Sum  = Reduction(backend.CollSum)
	Prod = Reduction(backend.CollProd)
	Max  = Reduction(backend.CollMax)
	Min  = Reduction(backend.CollMin)
	// Avg is the sum divided by the rank count (NCCL 2.10+); integers divide as C does.
	Avg = Reduction(backend.CollAvg)
)

func (o Reduction) String() string {
	switch o {
	case Sum:
		return "sum"
	case Prod:
		return "prod"
	case Max:
		return "max"
	case Min:
		return "min"
	case Avg:
		return "avg"
	}
	return "Reduction(" + strconv.Itoa(int(o)) + ")"
}

func (o Reduction) valid() bool { return o >= Sum && o <= Avg }
