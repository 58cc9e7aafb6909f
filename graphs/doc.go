// Package graphs runs work as CUDA graphs: a fixed set of GPU operations with their
// dependencies, instantiated once and launched many times for a fraction of the cost of
// launching each operation: a kernel node of a large graph costs a fraction of a plain launch.
//
// There are three ways to make a graph:
//
//   - Capture: the operations a function queues on a stream (and on streams that join it
//     through events) become the graph instead of running.
//   - The builder: New, then AddKernel, AddCopy, AddMemset, AddHost, AddChild, AddAlloc… with
//     explicit dependencies (After).
//   - Record: capture a function once, instantiate it and hand back a Template whose Launch
//     rebinds kernel arguments and launches, for a service that runs the same pipeline per
//     request with new buffers or sizes.
//
// Instantiate turns a Graph into an Exec, which launches on any stream of its device with a
// future that completes when the graph has run; LaunchN queues many runs back to back, as
// many per message to the actor as fit in a quarter of a millisecond of its time, where a
// launch per message pays the actor's per-message cost every time. An Exec's kernel nodes can be given new
// arguments (SetKernelArgs), nodes enabled and disabled, and the whole Exec updated from
// another graph of the same topology (Update); an update that cannot apply fails with an
// *UpdateError saying why. Instantiate reports a graph it cannot make executable with an
// *InstantiateError naming the node at fault.
//
// Copy nodes of boxes between CUDA arrays and pitched memory (alloc.Array, alloc.Pitched)
// are AddCopy3D with a Copy3D made by CopyPitched, CopyArray, CopyPitchedToArray or
// CopyArrayToPitched, checked as alloc's stream copies of the same names. The runtime keeps
// only handles of the events, arrays and pitched memory nodes use: once one is closed, launches
// of the graph's Execs are refused with device.ErrClosed naming it. The same holds for the
// external semaphores (interop.ImportSemaphore) of AddSemaphoreSignal and AddSemaphoreWait
// nodes, which order a graph with another API's work (Vulkan's, say).
//
// A graph's shape can be read and edited after its nodes are added: Node.Dependencies and
// Dependents, Graph.Depend (refusing an edge that would close a cycle, ErrCycle) and
// RemoveDependency, Node.Destroy, and Graph.NodeInClone to find a node's copy in a Clone;
// DebugDOT writes it in Graphviz DOT with the runtime's detail flags. ReadMemoryUsage,
// ResetMemoryHighWatermarks and TrimMemory report and give back the memory a device keeps
// for allocation nodes. A UserObject (NewUserObject) lets a Go resource live exactly as long
// as the graphs, copies and executable graphs that hold it.
//
// Conditional nodes (CUDA 12.3+; if/else and switch 12.8+) choose on the GPU what runs: a
// Condition (NewCondition) is a variable of a graph that kernels set with
// cudaGraphSetConditional, taking Condition.Handle as a cudaGraphConditionalHandle argument
// (simulated kernels call cuda.SimSetConditional). AddIf runs its body when the condition is
// non-zero, AddIfElse one of two bodies, AddSwitch body[v] for a value v below its count and
// nothing otherwise, AddWhile its body for as long as the condition stays non-zero (checked
// when the node is reached and after each run: give the condition Default(1) for a
// do-while). Bodies are *Graph values to build into (kernel, copy, memset, empty, child and
// conditional nodes only), or to capture into with BeginCaptureInto/CaptureInto; they belong
// to their node: Close on one is refused, and they close with the graph that holds the node.
// A condition serves its graph and that graph's bodies at any depth; used anywhere else it is
// ErrForeignCondition. Inside a stream capture, Capturing.NewCondition and Capturing.AddWhile
// (AddIf…) add them to the graph being captured. A graph with conditional nodes cannot be
// cloned or made a child; each Exec has its own copy of its conditions, reset to their
// Default at every launch when they have one and kept from launch to launch otherwise.
//
// Everything runs on the device's actor thread, like the rest of gpuactor, and on the
// simulator too: there nodes run in dependency order, independent ones concurrently.
//
// Capture and the Tracker: while a stream captures, what is queued on it does not run, so the
// futures of operations queued during a capture complete as soon as they are captured, and
// Stream.Synchronize or Query on a capturing stream is an error that invalidates the capture.
// Staged copies of Go slices (streams.CopyToDevice/CopyFromDevice) reuse their staging
// buffers as soon as a chunk's future completes, so they must not be captured: use
// AddUpload/AddDownload. A host function captured from streams.Stream.HostFunc runs at every
// launch, but its panics are not reported; Recorder.HostFunc and AddHost report them in the
// launch's future. In Global and ThreadLocal modes the device stops polling for completions
// while the capture is open (those modes forbid the queries it makes); Relaxed does not.
//
// A nil handle (*Graph, *Exec, *Node, *Capturing, *Recorder, *Template, *Staged, *UserObject) or a nil
// stream or event argument is refused with an error wrapping device.ErrInvalidArgument that
// names it (a future completes with it at once); accessors of a nil handle return zero
// values, and nothing panics.
package graphs
