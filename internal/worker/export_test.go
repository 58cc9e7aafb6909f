package worker

// CallParks is how many calls blocked for their reply rather than polling it in.
func (p *Process) CallParks() uint64 { return p.callParks.Load() }
