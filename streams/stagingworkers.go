package streams

// StagingWorkers reports how many goroutines copy host memory for the stream's staged
// uploads and downloads: StagingWorkers' count, or the ones the ring chose for the host when
// it was made. Both are 0 before the stream's first staged copy.
func (s *Stream) StagingWorkers() (upload, download int) {
	st := s.staging.Load()
	if st == nil {
		return 0, 0
	}
	return st.p.workers, st.p.downWorkers
}
