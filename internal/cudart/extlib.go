package cudart

// LoadLibrary opens another library of the CUDA toolkit (cuBLAS, cuFFT, …) for a program that
// binds it itself, searching as Load searches for libcudart (see Load's steps): a copy already
// in the process, $envVar (strict when set), pip wheels' wheelDirs under site-packages,
// $CONDA_PREFIX/lib, the sonames (newest first), $CUDA_HOME and $CUDA_PATH, /usr/local/cuda*.
// It returns the dlopen handle, never closed, and the file it opened; when nothing loads, a
// *LoadError listing every path tried.
func LoadLibrary(name, envVar string, wheelDirs, sonames []string) (handle uintptr, file string, err error) {
	lib, err := search(libSpec{name: name, envVar: envVar, wheelDirs: wheelDirs, sonames: sonames}, newConfig(nil))
	if err != nil {
		return 0, "", err
	}
	file = lib.file
	if file == "" {
		file = lib.name
	}
	return lib.handle, file, nil
}

// Symbol resolves an export of a library LoadLibrary opened (dlsym, or GetProcAddress on
// Windows).
func Symbol(handle uintptr, name string) (uintptr, error) { return dlsym(handle, name) }
