package sim

import (
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// User objects. An object counts all its references (total); the caller's are counted apart
// (caller), and each graph counts its own (sgraph.users), so that releasing more than one
// holds is an error rather than another holder's loss. Copies of a graph (clones, child
// nodes, executable graphs) take references of their own, and a launch holds one on each
// object of its executable graph until it is done, so an object outlives the launches of an
// executable graph destroyed while they run, as CUDA's do. The destructor runs on a
// goroutine of its own, as CUDA runs it on an internal thread.

// suobj is a user object.
type suobj struct {
	h       backend.UserObject
	total   int
	caller  int
	destroy func()
}

func (d *device) userObjLocked(op string, h backend.UserObject) (*suobj, error) {
	o := d.graphs.users[h]
	if o == nil {
		return nil, d.fail(op, cudaerr.InvalidValue, "user object %#x is not a live user object of device %d", uintptr(h), d.ordinal)
	}
	return o, nil
}

// dropUserRefsLocked drops n references to o, destroying it when none are left.
func (d *device) dropUserRefsLocked(o *suobj, n int) {
	if o.total -= n; o.total == 0 {
		delete(d.graphs.users, o.h)
		go d.safeHost(o.destroy)()
	}
}

// copyUsersLocked gives c, a new copy of g, references of its own to g's objects.
func (d *device) copyUsersLocked(g, c *sgraph) {
	if len(g.users) == 0 {
		return
	}
	c.users = make(map[*suobj]int, len(g.users))
	for o, n := range g.users {
		c.users[o] = n
		o.total += n
	}
}

// releaseUsersLocked drops the references of g, a graph being destroyed.
func (d *device) releaseUsersLocked(g *sgraph) {
	for o, n := range g.users {
		d.dropUserRefsLocked(o, n)
	}
	g.users = nil
}

// pinUsersLocked takes one reference on every object g and its child graphs hold, for a
// launch of g: unpinUsers drops them when it is done.
func (d *device) pinUsersLocked(g *sgraph, pinned []*suobj) []*suobj {
	for o := range g.users {
		o.total++
		pinned = append(pinned, o)
	}
	for _, n := range g.nodes {
		if n.child != nil {
			pinned = d.pinUsersLocked(n.child, pinned)
		}
	}
	return pinned
}

func (d *device) unpinUsers(pinned []*suobj) {
	if len(pinned) == 0 {
		return
	}
	d.graphs.mu.Lock()
	defer d.graphs.mu.Unlock()
	for _, o := range pinned {
		d.dropUserRefsLocked(o, 1)
	}
}

// UserObjectCreate makes a user object with one reference, the caller's.
func (d *device) UserObjectCreate(destroy func()) (backend.UserObject, error) {
	const op = "cudaUserObjectCreate"
	if err := d.alive(op); err != nil {
		return 0, err
	}
	if destroy == nil {
		return 0, d.fail(op, cudaerr.InvalidValue, "nil destructor")
	}
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.init()
	o := &suobj{h: backend.UserObject(d.b.nextHandle()), total: 1, caller: 1, destroy: destroy}
	gs.users[o.h] = o
	return o.h, nil
}

func (d *device) checkCount(op string, count uint32) error {
	if count == 0 || count > 1<<30 {
		return d.fail(op, cudaerr.InvalidValue, "reference count %d", count)
	}
	return nil
}

// UserObjectRetain adds references of the caller's.
func (d *device) UserObjectRetain(h backend.UserObject, count uint32) error {
	const op = "cudaUserObjectRetain"
	if err := d.checkCount(op, count); err != nil {
		return err
	}
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.init()
	o, err := d.userObjLocked(op, h)
	if err != nil {
		return err
	}
	o.total += int(count)
	o.caller += int(count)
	return nil
}

// UserObjectRelease drops references of the caller's.
func (d *device) UserObjectRelease(h backend.UserObject, count uint32) error {
	const op = "cudaUserObjectRelease"
	if err := d.checkCount(op, count); err != nil {
		return err
	}
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.init()
	o, err := d.userObjLocked(op, h)
	if err != nil {
		return err
	}
	if int(count) > o.caller {
		return d.fail(op, cudaerr.InvalidValue, "releasing %d references of user object %#x, the caller holds %d", count, uintptr(h), o.caller)
	}
	o.caller -= int(count)
	d.dropUserRefsLocked(o, int(count))
	return nil
}

// GraphRetainUserObject gives a graph references to an object.
func (d *device) GraphRetainUserObject(gh backend.Graph, h backend.UserObject, count uint32, move bool) error {
	const op = "cudaGraphRetainUserObject"
	if err := d.checkCount(op, count); err != nil {
		return err
	}
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.init()
	g, err := d.graphLocked(op, gh)
	if err != nil {
		return err
	}
	o, err := d.userObjLocked(op, h)
	if err != nil {
		return err
	}
	if move {
		if int(count) > o.caller {
			return d.fail(op, cudaerr.InvalidValue, "moving %d references of user object %#x, the caller holds %d", count, uintptr(h), o.caller)
		}
		o.caller -= int(count)
	} else {
		o.total += int(count)
	}
	if g.users == nil {
		g.users = map[*suobj]int{}
	}
	g.users[o] += int(count)
	return nil
}

// GraphReleaseUserObject drops a graph's references to an object.
func (d *device) GraphReleaseUserObject(gh backend.Graph, h backend.UserObject, count uint32) error {
	const op = "cudaGraphReleaseUserObject"
	if err := d.checkCount(op, count); err != nil {
		return err
	}
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.init()
	g, err := d.graphLocked(op, gh)
	if err != nil {
		return err
	}
	o, err := d.userObjLocked(op, h)
	if err != nil {
		return err
	}
	if int(count) > g.users[o] {
		return d.fail(op, cudaerr.InvalidValue, "releasing %d references of user object %#x, graph %#x holds %d", count, uintptr(h), uintptr(gh), g.users[o])
	}
	if g.users[o] -= int(count); g.users[o] == 0 {
		delete(g.users, o)
	}
	d.dropUserRefsLocked(o, int(count))
	return nil
}
