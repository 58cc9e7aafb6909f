//go:build windows

package egl

import "errors"

// EGL on Windows goes through the GPU vendor's ICD, not a libEGL this package loads: headless
// EGL here is a Linux (and macOS-build) matter.
var errNoDlopen = errors.New("no libEGL on Windows")

func dlopen(string) (uintptr, error)         { return 0, errNoDlopen }
func dlsym(uintptr, string) (uintptr, error) { return 0, errNoDlopen }
