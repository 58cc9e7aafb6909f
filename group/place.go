package group

import "hash/maphash"

var affinitySeed = maphash.MakeSeed()

// place picks where j waits: a member's own queue, or the shared queue (nil, true) from
// which the first free stream of any healthy device takes it, which is how LeastOutstanding
// places: a device that finishes sooner takes more. Where no device can take j now but one is
// restarting (WithRestart), j waits in the shared queue for it. (nil, false) when no device
// is healthy or restarting.
func (g *Group) place(j *job) (m *member, shared bool) {
	var pick func(*job) *member
	switch {
	case g.cfg.policy == RoundRobin:
		pick = g.roundRobin
	case g.cfg.policy == Affinity && j.cfg.key != "":
		pick = g.affinity
	case g.cfg.policy == Memory && j.cfg.bytes > 0:
		pick = g.byMemory
	}
	if pick != nil {
		if m := pick(j); m != nil {
			return m, false
		}
	} else {
		for _, m := range g.members {
			if usable(m, j) {
				return nil, true
			}
		}
	}
	return nil, g.cfg.open != nil && g.pending(j)
}

// usable reports whether m may take j: healthy, and with room for j's declared bytes.
func usable(m *member, j *job) bool {
	gn := m.cur.Load()
	return gn.healthy() && j.cfg.bytes <= gn.memBytes
}

func (g *Group) roundRobin(j *job) *member {
	n := len(g.members)
	start := int((g.rr.Add(1) - 1) % uint64(n)) // the first job goes to the first device
	for i := range n {
		if m := g.members[(start+i)%n]; usable(m, j) {
			return m
		}
	}
	return nil
}

// affinity: the key's device by hash, or the next healthy one after it while it is not.
func (g *Group) affinity(j *job) *member {
	n := len(g.members)
	start := int(maphash.String(affinitySeed, j.cfg.key) % uint64(n))
	for i := range n {
		if m := g.members[(start+i)%n]; usable(m, j) {
			return m
		}
	}
	return nil
}

// byMemory: the most memory not yet declared by jobs placed there; where none has room now,
// the one that will soonest (the most room), where the job waits for its bytes.
func (g *Group) byMemory(j *job) *member {
	var best *member
	var bestFree int64
	for _, m := range g.members {
		if !usable(m, j) {
			continue
		}
		if free := m.cur.Load().memBytes - m.reserved.Load(); best == nil || free > bestFree {
			best, bestFree = m, free
		}
	}
	return best
}
