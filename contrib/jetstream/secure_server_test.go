package jetstream_test

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
)

// secureEnv names the directory of the secured cluster's certificates and keys: a server
// process given it takes mutual TLS on its client port and routes, and the test's users.
const secureEnv = "GPUACTOR_JS_SECURE"

// The users of the secured cluster test: a worker (nkey) and a submitter (password), each with
// an inbox prefix of its own so that neither reads the other's answers.
const (
	submitterUser     = "submitter"
	submitterPassword = "s3cret-submitter"
	muteUser          = "mute-worker" // a worker that may not advertise its handlers
	mutePassword      = "s3cret-mute"
	workerInbox       = "_INBOX_worker"
	submitterInbox    = "_INBOX_submitter"
)

// queueStreams are the streams of queue GPUACTOR: its jobs, results, dead letters, error
// bucket and object store.
var queueStreams = []string{"GPUACTOR_JOBS", "GPUACTOR_RESULTS", "GPUACTOR_DEAD", "KV_GPUACTOR_ERRORS", "OBJ_GPUACTOR_DATA"}

func prefixed(prefix string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}

// objectPermissions are what a user of WithObjectStore needs more: to put, get and delete the
// objects of bucket GPUACTOR_DATA.
var objectPermissions = []string{
	"$O.GPUACTOR_DATA.>",
	"$JS.API.DIRECT.GET.OBJ_GPUACTOR_DATA.>",
	"$JS.API.STREAM.PURGE.OBJ_GPUACTOR_DATA",
	"$JS.API.CONSUMER.CREATE.OBJ_GPUACTOR_DATA", "$JS.API.CONSUMER.CREATE.OBJ_GPUACTOR_DATA.>",
	"$JS.FC.OBJ_GPUACTOR_DATA.>",
	"$JS.API.CONSUMER.DELETE.OBJ_GPUACTOR_DATA.*",
}

// workerPermissions are the least a worker of queue "gpuactor" needs (the README lists them):
// look up and make the queue's streams, make and pull the job consumers, acknowledge jobs,
// publish results and dead letters, keep job errors, advertise its handlers and answer the
// clients that ask for them.
func workerPermissions() *server.Permissions {
	pub := append(prefixed("$JS.API.STREAM.INFO.", queueStreams), prefixed("$JS.API.STREAM.CREATE.", queueStreams)...)
	pub = append(pub, "$JS.API.INFO",
		"$JS.API.CONSUMER.CREATE.GPUACTOR_JOBS.*.gpuactor.jobs.*",
		"$JS.API.CONSUMER.MSG.NEXT.GPUACTOR_JOBS.*",
		"$JS.ACK.GPUACTOR_JOBS.>",
		"gpuactor.results.*.*", "gpuactor.dead.*",
		"$KV.GPUACTOR_ERRORS.>", "$JS.API.DIRECT.GET.KV_GPUACTOR_ERRORS.>",
	)
	pub = append(pub, objectPermissions...)
	return &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: pub},
		Subscribe: &server.SubjectPermission{Allow: []string{workerInbox + ".>", "gpuactor.handlers.*"}},
		Response:  &server.ResponsePermission{MaxMsgs: 1},
	}
}

// submitterPermissions are the least a client of queue "gpuactor" named "submitter" needs:
// look up the streams, ask for handlers, publish jobs, delete a cancelled job, and read its
// own results only.
func submitterPermissions() *server.Permissions {
	pub := append(prefixed("$JS.API.STREAM.INFO.", queueStreams),
		"gpuactor.jobs.*", "gpuactor.handlers.*",
		"$JS.API.STREAM.MSG.DELETE.GPUACTOR_JOBS",
		"$JS.API.CONSUMER.CREATE.GPUACTOR_RESULTS.*.gpuactor.results.submitter.*",
		"$JS.API.CONSUMER.MSG.NEXT.GPUACTOR_RESULTS.*",
	)
	pub = append(pub, objectPermissions...)
	return &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: pub},
		Subscribe: &server.SubjectPermission{Allow: []string{submitterInbox + ".>"}},
	}
}

// secure adds mutual TLS (client port and routes) and the test's users to a server's options,
// from the files of dir.
func secure(o *server.Options, dir string) error {
	tc, err := loadServerTLS(dir)
	if err != nil {
		return err
	}
	rc, err := loadServerTLS(dir)
	if err != nil {
		return err
	}
	o.TLSConfig, o.TLSVerify, o.TLSTimeout = tc, true, 5
	o.Cluster.TLSConfig, o.Cluster.TLSTimeout = rc, 5
	pub, err := os.ReadFile(filepath.Join(dir, "worker.pub"))
	if err != nil {
		return err
	}
	o.Nkeys = []*server.NkeyUser{{Nkey: strings.TrimSpace(string(pub)), Permissions: workerPermissions()}}
	mute := workerPermissions()
	mute.Subscribe.Allow = []string{workerInbox + ".>"}
	o.Users = []*server.User{
		{Username: submitterUser, Password: submitterPassword, Permissions: submitterPermissions()},
		{Username: muteUser, Password: mutePassword, Permissions: mute},
	}
	return nil
}
