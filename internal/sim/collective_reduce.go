package sim

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// collCall is the NCCL function a CollOpKind calls, for messages and task names.
func collCall(k backend.CollOpKind) string {
	switch k {
	case backend.CollAllReduce:
		return "ncclAllReduce"
	case backend.CollBroadcast:
		return "ncclBroadcast"
	case backend.CollReduce:
		return "ncclReduce"
	case backend.CollAllGather:
		return "ncclAllGather"
	case backend.CollReduceScatter:
		return "ncclReduceScatter"
	case backend.CollSend:
		return "ncclSend"
	case backend.CollRecv:
		return "ncclRecv"
	}
	return fmt.Sprintf("CollOpKind(%d)", int32(k))
}

// collElemSize is the size of one element of t, or 0 for a type NCCL does not have.
func collElemSize(t backend.CollDataType) uint64 {
	switch t {
	case backend.CollInt8, backend.CollUint8, backend.CollFloat8E4M3, backend.CollFloat8E5M2:
		return 1
	case backend.CollFloat16, backend.CollBfloat16:
		return 2
	case backend.CollInt32, backend.CollUint32, backend.CollFloat32:
		return 4
	case backend.CollInt64, backend.CollUint64, backend.CollFloat64:
		return 8
	}
	return 0
}

// collResults computes what each rank of a collective receives from every rank's
// contribution (parts, by rank; empty where the rank sends nothing, as a broadcast's
// non-root ranks). A rank that receives nothing gets an empty result: it only learns that
// the collective is done.
func collResults(h collHeader, parts [][]byte) ([][]byte, string) {
	n := len(parts)
	z := collElemSize(h.dtype)
	bytes := h.count * z
	out := make([][]byte, n)
	want := func(size uint64, ranks ...int) string {
		for _, r := range ranks {
			if uint64(len(parts[r])) != size {
				return fmt.Sprintf("rank %d contributed %d bytes, %d expected", r, len(parts[r]), size)
			}
		}
		return ""
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	switch h.kind {
	case backend.CollAllReduce, backend.CollReduce:
		if e := want(bytes, all...); e != "" {
			return nil, e
		}
		red := reduceParts(h.dtype, h.op, parts)
		for i := range out {
			if h.kind == backend.CollAllReduce || i == int(h.root) {
				out[i] = red
			}
		}
	case backend.CollBroadcast:
		if e := want(bytes, int(h.root)); e != "" {
			return nil, e
		}
		for i := range out {
			out[i] = parts[h.root]
		}
	case backend.CollAllGather:
		if e := want(bytes, all...); e != "" {
			return nil, e
		}
		cat := make([]byte, 0, bytes*uint64(n))
		for _, p := range parts {
			cat = append(cat, p...)
		}
		for i := range out {
			out[i] = cat
		}
	case backend.CollReduceScatter:
		if e := want(bytes*uint64(n), all...); e != "" {
			return nil, e
		}
		red := reduceParts(h.dtype, h.op, parts)
		for i := range out {
			out[i] = red[uint64(i)*bytes : uint64(i+1)*bytes]
		}
	default:
		return nil, fmt.Sprintf("%s is not a collective", collCall(h.kind))
	}
	return out, ""
}

// reduceParts combines the ranks' equal-length contributions element by element, in rank
// order, in the element type. NCCL's average is a sum divided by the rank count for
// integers (truncating, as C's division does) and, for floating types, a sum of each
// element multiplied by 1/nranks in that type.
func reduceParts(t backend.CollDataType, op backend.CollRedOp, parts [][]byte) []byte {
	switch t {
	case backend.CollInt8:
		return reduceAs[int8](op, parts, false)
	case backend.CollUint8:
		return reduceAs[uint8](op, parts, false)
	case backend.CollInt32:
		return reduceAs[int32](op, parts, false)
	case backend.CollUint32:
		return reduceAs[uint32](op, parts, false)
	case backend.CollInt64:
		return reduceAs[int64](op, parts, false)
	case backend.CollUint64:
		return reduceAs[uint64](op, parts, false)
	case backend.CollFloat32:
		return reduceAs[float32](op, parts, true)
	case backend.CollFloat64:
		return reduceAs[float64](op, parts, true)
	case backend.CollFloat16:
		return reduceNarrow(op, parts, 2, halfToFloat, floatToHalf) // halfToFloat: sampler.go
	case backend.CollBfloat16:
		return reduceNarrow(op, parts, 2, bf16ToFloat, floatToBF16)
	case backend.CollFloat8E4M3:
		return reduceNarrow(op, parts, 1, e4m3ToFloat, floatToE4M3)
	case backend.CollFloat8E5M2:
		return reduceNarrow(op, parts, 1, e5m2ToFloat, floatToE5M2)
	}
	panic(fmt.Sprintf("reduceParts: data type %d", t)) // CollLaunch checked the type
}

type collElem interface {
	~int8 | ~uint8 | ~int32 | ~uint32 | ~int64 | ~uint64 | ~float32 | ~float64
}

// elems copies little-endian bytes (the host's order, as the simulator's memory is) into a
// fresh, aligned []T.
func elems[T collElem](p []byte) []T {
	var zero T
	n := len(p) / int(unsafe.Sizeof(zero))
	v := make([]T, n)
	if n > 0 {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(p)), p)
	}
	return v
}

// elemBytes is v's bytes.
func elemBytes[T collElem](v []T) []byte {
	if len(v) == 0 {
		return []byte{}
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*int(unsafe.Sizeof(zero)))
}

// combine is one step of a reduction. Max and min of floating values drop a NaN, as NCCL's
// fmaxf and fminf (and __hmax, __hmin) do; Go's max and min would keep it.
func combine[T collElem](a, b T, op backend.CollRedOp) T {
	switch op {
	case backend.CollProd:
		return a * b
	case backend.CollMax, backend.CollMin:
		switch {
		case b != b: // NaN
			return a
		case a != a: // NaN
			return b
		case op == backend.CollMax:
			return max(a, b)
		}
		return min(a, b)
	}
	return a + b // sum, and the sum of an average
}

func reduceAs[T collElem](op backend.CollRedOp, parts [][]byte, float bool) []byte {
	n := T(len(parts))
	premul := op == backend.CollAvg && float
	scale := T(1)
	if premul {
		scale = T(1) / n
	}
	acc := elems[T](parts[0])
	if premul {
		for i := range acc {
			acc[i] *= scale
		}
	}
	for _, p := range parts[1:] {
		x := elems[T](p)
		for i := range acc {
			v := x[i]
			if premul {
				v *= scale
			}
			acc[i] = combine(acc[i], v, op)
		}
	}
	if op == backend.CollAvg && !float {
		for i := range acc {
			acc[i] /= n
		}
	}
	return elemBytes(acc)
}

// reduceNarrow reduces a floating type narrower than float32 as the GPU does: each step in
// float32, rounded back to the type.
func reduceNarrow(op backend.CollRedOp, parts [][]byte, size int, get func(uint16) float32, put func(float32) uint16) []byte {
	load := func(p []byte, i int) uint16 {
		if size == 1 {
			return uint16(p[i])
		}
		return uint16(p[2*i]) | uint16(p[2*i+1])<<8
	}
	n := len(parts[0]) / size
	acc := make([]uint16, n)
	scale := float32(1)
	if op == backend.CollAvg {
		scale = get(put(1 / float32(len(parts))))
	}
	for r, p := range parts {
		for i := range acc {
			v := get(load(p, i))
			if op == backend.CollAvg {
				v = get(put(v * scale))
			}
			if r == 0 {
				acc[i] = put(v)
				continue
			}
			acc[i] = put(combine(get(acc[i]), v, op))
		}
	}
	out := make([]byte, len(parts[0]))
	for i, v := range acc {
		if size == 1 {
			out[i] = byte(v)
		} else {
			out[2*i], out[2*i+1] = byte(v), byte(v>>8)
		}
	}
	return out
}

// floatToHalf rounds to the nearest binary16, ties to even; too large is infinity.
func floatToHalf(f float32) uint16 { return floatToMini(f, 5, 10, false) }

// bf16ToFloat widens a bfloat16.
func bf16ToFloat(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// floatToBF16 rounds to the nearest bfloat16, ties to even.
func floatToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if f != f {
		return uint16(b>>16) | 0x40 // quiet NaN
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// e4m3ToFloat widens an OCP float8 E4M3 (no infinities; S.1111.111 is NaN).
func e4m3ToFloat(h uint16) float32 { return miniToFloat(h, 4, 3, true) }

// floatToE4M3 rounds to the nearest E4M3, ties to even, saturating to ±448 as NCCL's
// reductions do.
func floatToE4M3(f float32) uint16 { return floatToMini(f, 4, 3, true) }

// e5m2ToFloat widens an OCP float8 E5M2 (IEEE-like, with infinities).
func e5m2ToFloat(h uint16) float32 { return miniToFloat(h, 5, 2, false) }

// floatToE5M2 rounds to the nearest E5M2, ties to even, saturating to ±57344 as NCCL's
// reductions do.
func floatToE5M2(f float32) uint16 {
	if math.IsInf(float64(f), 0) {
		return floatToMini(f, 5, 2, false)
	}
	v := floatToMini(f, 5, 2, false)
	if v&0x7f == 0x7c { // rounded up to infinity: saturate to the largest finite
		return v&0x80 | 0x7b
	}
	return v
}

// miniToFloat widens a small float of 1 sign, ebits exponent and mbits mantissa bits with
// an IEEE bias; fn is E4M3's encoding: no infinities, only all-ones is NaN.
func miniToFloat(h uint16, ebits, mbits uint, fn bool) float32 {
	bias := int(1)<<(ebits-1) - 1
	sign := float32(1)
	if h>>(ebits+mbits)&1 != 0 {
		sign = -1
	}
	e := int(h>>mbits) & (1<<ebits - 1)
	m := int(h) & (1<<mbits - 1)
	switch {
	case fn && e == 1<<ebits-1 && m == 1<<mbits-1:
		return float32(math.NaN())
	case !fn && e == 1<<ebits-1:
		if m != 0 {
			return float32(math.NaN())
		}
		return sign * float32(math.Inf(1))
	case e == 0:
		return sign * float32(math.Ldexp(float64(m), 1-bias-int(mbits)))
	}
	return sign * float32(math.Ldexp(float64(1<<mbits|m), e-bias-int(mbits)))
}

// floatToMini rounds f to the small float miniToFloat reads, ties to even. Out of range is
// infinity (IEEE-like) or the largest finite value (fn, which has no infinity).
func floatToMini(f float32, ebits, mbits uint, fn bool) uint16 {
	bias := int(1)<<(ebits-1) - 1
	var sign uint16
	if math.Signbit(float64(f)) {
		sign = 1 << (ebits + mbits)
	}
	expMask := uint16(1<<ebits - 1)
	if f != f {
		if fn {
			return sign | expMask<<mbits | (1<<mbits - 1)
		}
		return sign | expMask<<mbits | 1<<(mbits-1)
	}
	a := math.Abs(float64(f))
	maxFinite := math.Ldexp(float64(int(2)<<mbits-1), int(expMask)-1-bias-int(mbits))
	if fn {
		maxFinite = math.Ldexp(float64(int(2)<<mbits-2), int(expMask)-bias-int(mbits))
	}
	if math.IsInf(a, 0) {
		if fn {
			return sign | expMask<<mbits | (1<<mbits - 2)
		}
		return sign | expMask<<mbits
	}
	// Scale so that the kept mantissa bits are the integer part, then round to even.
	_, e := math.Frexp(a)   // a = frac * 2^e, frac in [0.5, 1)
	exp := max(e-1, 1-bias) // subnormals share the smallest exponent
	q := math.RoundToEven(math.Ldexp(a, int(mbits)-exp))
	v := math.Ldexp(q, exp-int(mbits))
	if v > maxFinite {
		if fn {
			return sign | expMask<<mbits | (1<<mbits - 2)
		}
		return sign | expMask<<mbits
	}
	if v == 0 {
		return sign
	}
	_, e = math.Frexp(v)
	exp = max(e-1, 1-bias)
	mant := uint16(math.Ldexp(v, int(mbits)-exp))
	if exp == 1-bias && mant < 1<<mbits {
		return sign | mant // subnormal
	}
	return sign | uint16(exp+bias)<<mbits | mant&(1<<mbits-1)
}
