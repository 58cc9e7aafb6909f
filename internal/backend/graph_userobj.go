package backend

// UserObject is an opaque cudaUserObject_t: a reference-counted object whose destructor runs
// when the last reference, of the caller's or of a graph's, is released.
type UserObject uintptr

// GraphUserObjectDevice is user objects and the references graphs hold to them. A graph that
// holds a reference passes it on to its clones, to the graphs it is a child of and to the
// executable graphs made from it; the object is destroyed once every holder is destroyed and
// the launches of executable graphs holding it are done. Actor thread only.
type GraphUserObjectDevice interface {
	// UserObjectCreate makes a user object with one reference, the caller's
	// (cudaUserObjectCreate). destroy runs once, when the last reference is gone, on a thread
	// the backend owns; it must not call the backend, and nothing waits for it.
	UserObjectCreate(destroy func()) (UserObject, error)
	// UserObjectRetain adds count references of the caller's (cudaUserObjectRetain).
	UserObjectRetain(o UserObject, count uint32) error
	// UserObjectRelease drops count references of the caller's (cudaUserObjectRelease).
	UserObjectRelease(o UserObject, count uint32) error
	// GraphRetainUserObject gives g count references to o: new ones, or with move the
	// caller's own (cudaGraphRetainUserObject).
	GraphRetainUserObject(g Graph, o UserObject, count uint32, move bool) error
	// GraphReleaseUserObject drops count of g's references to o (cudaGraphReleaseUserObject).
	GraphReleaseUserObject(g Graph, o UserObject, count uint32) error
}
