package core

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/gpuactor/gpuactor/cuda"
)

// ArgKind is a kernel parameter's kind.
type ArgKind = cuda.ArgKind

// param is one kernel parameter. From CUDA C++ source the kind is exact; from PTX only the
// width and whether it is a float are known, so loose accepts any integer or pointer of that width.
type param struct {
	kind  ArgKind
	loose bool
	sized bool // only the size is known (cudaFuncGetParamInfo): kind is Int32 or Int64
}

func (p param) accepts(k ArgKind) bool {
	if p.sized {
		return k.Size() == p.kind.Size()
	}
	if !p.loose {
		return p.kind == k
	}
	isFloat := func(k ArgKind) bool { return k == cuda.Float32 || k == cuda.Float64 }
	return k.Size() == p.kind.Size() && isFloat(k) == isFloat(p.kind)
}

func (p param) String() string {
	if p.sized {
		return fmt.Sprintf("%d-byte value", p.kind.Size())
	}
	if !p.loose {
		return p.kind.String()
	}
	switch {
	case p.kind == cuda.Float32 || p.kind == cuda.Float64:
		return p.kind.String()
	case p.kind.Size() == 4:
		return "32-bit integer"
	}
	return "64-bit integer or pointer"
}

var (
	cudaKernelRE = regexp.MustCompile(`__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?([A-Za-z_]\w*)\s*\(([^)]*)\)`)
	ptxEntryRE   = regexp.MustCompile(`\.entry\s+([A-Za-z_$][\w$]*)\s*\(([^)]*)\)`)
	ptxParamRE   = regexp.MustCompile(`\.param\s+(\.\w+)`)
	cudaComment  = regexp.MustCompile(`(?s)//[^\n]*|/\*.*?\*/`)
)

// Signatures are the kernels of a module and their parameters; a kernel mapped to nil has
// parameters gpuactor cannot check.
type Signatures map[string][]param

// CUDASignatures finds the __global__ functions of CUDA C++ source and their parameters. A
// kernel whose parameter types are not plain scalars or pointers maps to nil (unchecked).
func CUDASignatures(src string) Signatures {
	out := Signatures{}
	src = cudaComment.ReplaceAllString(src, " ")
	for _, m := range cudaKernelRE.FindAllStringSubmatch(src, -1) {
		out[m[1]] = cudaParams(m[2])
	}
	return out
}

func cudaParams(list string) []param {
	list = strings.TrimSpace(list)
	if list == "" || list == "void" {
		return []param{}
	}
	var ps []param
	for _, decl := range strings.Split(list, ",") {
		k, ok := cudaParamKind(decl)
		if !ok {
			return nil
		}
		ps = append(ps, param{kind: k})
	}
	return ps
}

func cudaParamKind(decl string) (ArgKind, bool) {
	if strings.ContainsAny(decl, "[]&<=") {
		return 0, false
	}
	if strings.Contains(decl, "*") {
		return cuda.Pointer, true
	}
	var words []string
	for _, w := range strings.Fields(decl) {
		switch w {
		case "const", "volatile", "__restrict__", "restrict", "__restrict", "register":
			continue
		}
		words = append(words, w)
	}
	if len(words) > 1 && !typeWord(words[len(words)-1]) {
		words = words[:len(words)-1] // the parameter's name
	}
	switch strings.Join(words, " ") {
	case "int", "signed", "signed int", "int32_t":
		return cuda.Int32, true
	case "unsigned", "unsigned int", "uint32_t", "uint":
		return cuda.Uint32, true
	case "long long", "long long int", "signed long long", "signed long long int", "long", "long int", "int64_t", "ptrdiff_t":
		return cuda.Int64, true
	case "unsigned long long", "unsigned long long int", "unsigned long", "unsigned long int", "uint64_t", "size_t",
		"cudaGraphConditionalHandle":
		return cuda.Uint64, true
	case "float":
		return cuda.Float32, true
	case "double":
		return cuda.Float64, true
	case "cudaTextureObject_t":
		return cuda.Texture, true
	case "cudaSurfaceObject_t":
		return cuda.Surface, true
	}
	return 0, false
}

func typeWord(w string) bool {
	switch w {
	case "int", "signed", "unsigned", "long", "short", "char", "float", "double", "int32_t", "uint32_t",
		"int64_t", "uint64_t", "size_t", "ptrdiff_t", "uint", "cudaTextureObject_t", "cudaSurfaceObject_t":
		return true
	}
	return false
}

// PTXSignatures reads the .entry parameter lists of PTX text.
func PTXSignatures(ptx string) Signatures {
	out := Signatures{}
	for _, m := range ptxEntryRE.FindAllStringSubmatch(ptx, -1) {
		var ps []param
		ok := true
		for _, decl := range strings.Split(m[2], ",") {
			if strings.TrimSpace(decl) == "" {
				continue
			}
			t := ptxParamRE.FindStringSubmatch(decl)
			if t == nil || strings.Contains(decl, "[") {
				ok = false
				break
			}
			switch t[1] {
			case ".u32", ".s32", ".b32":
				ps = append(ps, param{kind: cuda.Int32, loose: true})
			case ".u64", ".s64", ".b64":
				ps = append(ps, param{kind: cuda.Int64, loose: true})
			case ".f32":
				ps = append(ps, param{kind: cuda.Float32, loose: true})
			case ".f64":
				ps = append(ps, param{kind: cuda.Float64, loose: true})
			default:
				ok = false
			}
		}
		if ok {
			if ps == nil {
				ps = []param{}
			}
			out[m[1]] = ps
		} else {
			out[m[1]] = nil
		}
	}
	return out
}

// sizedParams are the parameters of a kernel whose image gives only their sizes
// (cudaFuncGetParamInfo): nil, unknown, when one is neither 4 nor 8 bytes (a struct by value).
func sizedParams(sizes []uint64) []param {
	ps := make([]param, len(sizes))
	for i, n := range sizes {
		switch n {
		case 4:
			ps[i] = param{kind: cuda.Int32, sized: true}
		case 8:
			ps[i] = param{kind: cuda.Int64, sized: true}
		default:
			return nil
		}
	}
	return ps
}
