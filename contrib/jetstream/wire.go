package jetstream

import (
	"fmt"
	"regexp"
	"strings"
)

// Headers of the messages: a job carries its id (JetStream's message id, which drops a second
// publish of the same job within the stream's duplicate window), the subject its result goes
// to and its deadline; a result carries the job id, the worker, and an error if it failed.
const (
	hdrMsgID    = "Nats-Msg-Id"
	hdrReply    = "Gpuactor-Reply"
	hdrDeadline = "Gpuactor-Deadline"
	hdrJob      = "Gpuactor-Job"
	hdrHandler  = "Gpuactor-Handler"
	hdrWorker   = "Gpuactor-Worker"
	hdrErr      = "Gpuactor-Error"
	hdrErrKind  = "Gpuactor-Error-Kind"
	hdrObject   = "Gpuactor-Object" // the payload is this object of the object store
	hdrSize     = "Gpuactor-Size"   // the object's size
)

// headerRoom is what Submit keeps of the server's max payload for the headers.
const headerRoom = 1024

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// checkName refuses a handler, queue or job name that is not a plain subject token.
func checkName(what, s string) error {
	if !nameRE.MatchString(s) {
		return fmt.Errorf("jetstream: %s %q: want 1 to 64 of A-Z a-z 0-9 _ -", what, s)
	}
	return nil
}

// subjects of one queue named n.
type subjects struct{ name string }

func (s subjects) jobs(handler string) string   { return s.name + ".jobs." + handler }
func (s subjects) results(client string) string { return s.name + ".results." + client }

// isResults says whether subject is a client's results subject, NAME.results.<name>.<id>: a
// worker publishes a job's result to no other, whatever the job's message says.
func (s subjects) isResults(subject string) bool {
	rest, ok := strings.CutPrefix(subject, s.name+".results.")
	name, id, two := strings.Cut(rest, ".")
	return ok && two && nameRE.MatchString(name) && nameRE.MatchString(id)
}
func (s subjects) dead(handler string) string    { return s.name + ".dead." + handler }
func (s subjects) handler(handler string) string { return s.name + ".handlers." + handler }
func (s subjects) jobStream() string             { return strings.ToUpper(s.name) + "_JOBS" }
func (s subjects) resultStream() string          { return strings.ToUpper(s.name) + "_RESULTS" }
func (s subjects) deadStream() string            { return strings.ToUpper(s.name) + "_DEAD" }
func (s subjects) dataBucket() string            { return strings.ToUpper(s.name) + "_DATA" }
func (s subjects) errorBucket() string           { return strings.ToUpper(s.name) + "_ERRORS" }
func (s subjects) consumer(handler string) string {
	return "h_" + handler
}
