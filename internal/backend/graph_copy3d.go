package backend

// GraphCopy3DDevice is the copy nodes of boxes between CUDA arrays and pitched device memory
// of the graph's device (cudaGraphAddMemcpyNode and its get and set calls with a
// cudaMemcpy3DParms of kind cudaMemcpyDeviceToDevice): the graph form of ArrayDevice.Copy3D.
// Boxes are as Copy3D takes them. A box outside a side is refused with
// cudaerr.InvalidValue (or InvalidPitchValue) and adds or changes nothing.
type GraphCopy3DDevice interface {
	// GraphAddMemcpyNode3D adds the copy p after deps.
	GraphAddMemcpyNode3D(g Graph, deps []GraphNode, p Copy3DParams) (GraphNode, error)
	// GraphMemcpyNodeGetParams3D is copy node n's parameters as a copy between device-side
	// places. A copy with a host side, or one the backend cannot read back as such, is
	// refused with cudaerr.NotSupported.
	GraphMemcpyNodeGetParams3D(n GraphNode) (Copy3DParams, error)
	// GraphMemcpyNodeSetParams3D makes copy node n the copy p.
	GraphMemcpyNodeSetParams3D(n GraphNode, p Copy3DParams) error
	// GraphExecMemcpyNodeSetParams3D makes copy node n of x the copy p for x's later
	// launches; its memory must be of the device the node's copy was on.
	GraphExecMemcpyNodeSetParams3D(x GraphExec, n GraphNode, p Copy3DParams) error
}
