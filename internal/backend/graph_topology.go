package backend

// GraphTopologyDevice is the part of the graph API that reads and edits a graph's shape
// after its nodes are added (cudaGraphNodeGetDependencies, cudaGraphRemoveDependencies,
// cudaGraphDestroyNode...). Actor thread only, as GraphDevice.
type GraphTopologyDevice interface {
	// GraphNodeDependencies lists the nodes n runs after (cudaGraphNodeGetDependencies).
	GraphNodeDependencies(n GraphNode) ([]GraphNode, error)
	// GraphNodeDependents lists the nodes that run after n (cudaGraphNodeGetDependentNodes).
	GraphNodeDependents(n GraphNode) ([]GraphNode, error)
	// GraphRemoveDependencies removes the edges from[i] → to[i] of g; every edge must exist,
	// and none is removed when one does not (cudaGraphRemoveDependencies).
	GraphRemoveDependencies(g Graph, from, to []GraphNode) error
	// GraphDestroyNode removes n and its edges from its graph (cudaGraphDestroyNode).
	GraphDestroyNode(n GraphNode) error
	// GraphNodeFindInClone is the node of clone copied from orig, a node of the graph clone
	// was cloned from (cudaGraphNodeFindInClone).
	GraphNodeFindInClone(clone Graph, orig GraphNode) (GraphNode, error)
	// GraphNodeEnabled reports whether node n (of the graph x was made from) is enabled in x
	// (cudaGraphNodeGetEnabled).
	GraphNodeEnabled(x GraphExec, n GraphNode) (bool, error)
}
