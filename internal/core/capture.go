package core

import "github.com/gpuactor/gpuactor/internal/backend"

// Stream capture and the Tracker. Work queued on a capturing stream does not run: it becomes
// a node of a graph. So an op enqueued during a capture is complete as soon as it is captured
// (After runs its callback at once), and the Tracker never records a watermark on a capturing
// stream, where the record would itself be captured and querying it would break the capture.
//
// Global and thread-local captures also forbid "potentially unsafe" calls (event and stream
// queries among them) on the capturing thread, which here is the actor's thread, and global
// ones on every thread. gpuactor's choice: while a capture in either mode is open on a device,
// its Tracker does not poll at all; completions of work queued before the capture are noticed
// once the capture ends. A relaxed capture forbids nothing, and polling goes on. Other devices'
// actors keep polling even during a global capture: their calls act on their own streams and
// contexts; a caller who needs the strict process-wide guarantee uses thread-local or relaxed
// mode, which gpuactor recommends.
type captures struct {
	modes  map[backend.Stream]backend.CaptureMode // streams that began a capture
	strict int                                    // open captures in global or thread-local mode
}

// BeginCapture notes that s is about to begin a capture in mode. Call it on the actor thread
// right before the backend's StreamBeginCapture, and EndCapture if that fails. Callbacks
// registered on s before the capture get their watermark now, while recording one on s is
// still an ordinary call: during the capture it would be captured. It reports false, and
// changes nothing, when s is already noted as capturing.
func (t *Tracker) BeginCapture(s backend.Stream, mode backend.CaptureMode) bool {
	if _, ok := t.capture.modes[s]; ok {
		return false
	}
	if tr := t.streams[s]; tr != nil && len(tr.open) > 0 {
		_ = t.watermark(s, tr, t.lastNow) // pacing only needs a clock: the last poll's will do
	}
	if t.capture.modes == nil {
		t.capture.modes = map[backend.Stream]backend.CaptureMode{}
	}
	t.capture.modes[s] = mode
	if mode != backend.CaptureRelaxed {
		t.capture.strict++
	}
	return true
}

// EndCapture notes that the capture s began has ended (successfully or not).
func (t *Tracker) EndCapture(s backend.Stream) {
	mode, ok := t.capture.modes[s]
	if !ok {
		return
	}
	delete(t.capture.modes, s)
	if mode != backend.CaptureRelaxed {
		t.capture.strict--
	}
}

// Capturing reports whether work queued on s is being captured: s began a capture, or joined
// one by waiting on an event recorded in it (asked of the backend only while a capture is
// open on the device, so it costs nothing otherwise).
func (t *Tracker) Capturing(s backend.Stream) bool {
	if len(t.capture.modes) == 0 {
		return false
	}
	if _, ok := t.capture.modes[s]; ok {
		return true
	}
	info, err := t.dev.StreamCaptureInfo(s)
	return err == nil && info.Status != backend.CaptureNone
}

// pollPaused reports whether polling must wait for a strict capture to end.
func (t *Tracker) pollPaused() bool { return t.capture.strict > 0 }
