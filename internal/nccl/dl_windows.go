package nccl

import "errors"

// errNoWindows is why nothing loads on Windows: NVIDIA ships NCCL for Linux only.
var errNoWindows = errors.New("NCCL has no Windows build")

func dlopen(string, bool) (uintptr, error) { return 0, errNoWindows }

func dlsym(uintptr, string) (uintptr, error) { return 0, errNoWindows }
