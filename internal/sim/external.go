package sim

import (
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// The simulator has no other API to import from: every external memory and semaphore call
// fails with cudaErrorNotSupported and leaves the device as it was (the error is not sticky).
// The runtime takes no file descriptor it refuses, so the caller keeps its fd.

// externalNotSupported is the error of external-resource call op.
func (d *device) externalNotSupported(op string) error {
	if err := d.alive(op); err != nil {
		return err
	}
	return d.fail(op, cudaerr.NotSupported, "external memory and semaphores are not simulated: the simulator has no other graphics or compute API to import from")
}

func (d *device) ImportExternalMemoryFD(int, uint64, uint32) (backend.ExternalMemory, error) {
	return 0, d.externalNotSupported("cudaImportExternalMemory")
}

func (d *device) ExternalMemoryMappedBuffer(backend.ExternalMemory, uint64, uint64) (backend.DevicePtr, error) {
	return 0, d.externalNotSupported("cudaExternalMemoryGetMappedBuffer")
}

func (d *device) ExternalMemoryMappedMipmappedArray(backend.ExternalMemory, uint64, backend.ChannelFormat, backend.Extent3D, uint32, uint32) (backend.MipmappedArray, error) {
	return 0, d.externalNotSupported("cudaExternalMemoryGetMappedMipmappedArray")
}

func (d *device) DestroyExternalMemory(backend.ExternalMemory) error {
	return d.externalNotSupported("cudaDestroyExternalMemory")
}

func (d *device) ImportExternalSemaphoreFD(int, backend.ExternalSemaphoreKind) (backend.ExternalSemaphore, error) {
	return 0, d.externalNotSupported("cudaImportExternalSemaphore")
}

func (d *device) SignalExternalSemaphore(backend.ExternalSemaphore, uint64, backend.Stream) error {
	return d.externalNotSupported("cudaSignalExternalSemaphoresAsync")
}

func (d *device) WaitExternalSemaphore(backend.ExternalSemaphore, uint64, backend.Stream) error {
	return d.externalNotSupported("cudaWaitExternalSemaphoresAsync")
}

func (d *device) DestroyExternalSemaphore(backend.ExternalSemaphore) error {
	return d.externalNotSupported("cudaDestroyExternalSemaphore")
}

var _ backend.ExternalDevice = (*device)(nil)

// The simulator's graphs have no external semaphore nodes: there are no semaphores to put in
// them.

func (d *device) GraphAddExternalSemaphoresSignalNode(backend.Graph, []backend.GraphNode, []backend.SemaphoreOp) (backend.GraphNode, error) {
	return 0, d.externalNotSupported("cudaGraphAddExternalSemaphoresSignalNode")
}

func (d *device) GraphAddExternalSemaphoresWaitNode(backend.Graph, []backend.GraphNode, []backend.SemaphoreOp) (backend.GraphNode, error) {
	return 0, d.externalNotSupported("cudaGraphAddExternalSemaphoresWaitNode")
}

func (d *device) GraphExternalSemaphoresSignalNodeGetParams(backend.GraphNode) ([]backend.SemaphoreOp, error) {
	return nil, d.externalNotSupported("cudaGraphExternalSemaphoresSignalNodeGetParams")
}

func (d *device) GraphExternalSemaphoresSignalNodeSetParams(backend.GraphNode, []backend.SemaphoreOp) error {
	return d.externalNotSupported("cudaGraphExternalSemaphoresSignalNodeSetParams")
}

func (d *device) GraphExternalSemaphoresWaitNodeGetParams(backend.GraphNode) ([]backend.SemaphoreOp, error) {
	return nil, d.externalNotSupported("cudaGraphExternalSemaphoresWaitNodeGetParams")
}

func (d *device) GraphExternalSemaphoresWaitNodeSetParams(backend.GraphNode, []backend.SemaphoreOp) error {
	return d.externalNotSupported("cudaGraphExternalSemaphoresWaitNodeSetParams")
}

func (d *device) GraphExecExternalSemaphoresSignalNodeSetParams(backend.GraphExec, backend.GraphNode, []backend.SemaphoreOp) error {
	return d.externalNotSupported("cudaGraphExecExternalSemaphoresSignalNodeSetParams")
}

func (d *device) GraphExecExternalSemaphoresWaitNodeSetParams(backend.GraphExec, backend.GraphNode, []backend.SemaphoreOp) error {
	return d.externalNotSupported("cudaGraphExecExternalSemaphoresWaitNodeSetParams")
}
