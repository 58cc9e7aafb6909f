package cudart

// ProfilerStart enables profile collection by an attached profiler (cudaProfilerStart).
func (r *Runtime) ProfilerStart() error { return r.call(fnProfilerStart) }

// ProfilerStop disables profile collection and flushes it (cudaProfilerStop).
func (r *Runtime) ProfilerStop() error { return r.call(fnProfilerStop) }
