package jetstream_test

const workerEnv = "GPUACTOR_JS_WORKER"

func workerMain() {}
