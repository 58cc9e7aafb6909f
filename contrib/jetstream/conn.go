package jetstream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Conn is a connection to the queue: to an embedded server, or to a NATS cluster by URL. The
// same workers and clients run over either.
type Conn struct {
	nc     *nats.Conn
	js     jetstream.JetStream
	subj   subjects
	cfg    connConfig
	owned  *Server // the embedded server Connect started, shut down by Close
	obj    jetstream.ObjectStore
	denied denials
}

// Option configures Connect.
type Option func(*connConfig)

type connConfig struct {
	urls        []string
	natsOpts    []nats.Option
	server      *Server
	serverOpts  []ServerOption
	name        string
	replicas    int
	memory      bool
	ackWait     time.Duration
	maxAttempts int
	dupWindow   time.Duration
	objectAbove int
}

// WithURL connects to the NATS servers at urls (a cluster) instead of an embedded server.
func WithURL(urls ...string) Option { return func(c *connConfig) { c.urls = urls } }

// WithNATS passes options to the NATS client as they are, for workers and clients alike:
// credentials (nats.UserInfo, nats.NkeyOptionFromSeed or nats.Nkey, nats.UserCredentials for a
// creds file), TLS (nats.Secure with a *tls.Config, or nats.ClientCert and nats.RootCAs for
// mutual TLS), an inbox prefix of the user's own (nats.CustomInboxPrefix), names. An
// error handler given here (nats.ErrorHandler) still gets every asynchronous error.
func WithNATS(opts ...nats.Option) Option {
	return func(c *connConfig) { c.natsOpts = append(c.natsOpts, opts...) }
}

// WithServer connects in-process to an embedded server started by StartServer, which the
// caller keeps and shuts down after the Conn.
func WithServer(s *Server) Option { return func(c *connConfig) { c.server = s } }

// WithEmbedded gives the options of the embedded server that Connect starts when given
// neither a URL nor a server; that server lives as long as the Conn.
func WithEmbedded(opts ...ServerOption) Option {
	return func(c *connConfig) { c.serverOpts = append(c.serverOpts, opts...) }
}

// WithQueueName names the queue (default "gpuactor"): its subjects start with name, its
// streams with name in capitals. Workers and clients of one queue use the same name.
func WithQueueName(name string) Option { return func(c *connConfig) { c.name = name } }

// WithReplicas replicates the streams n ways in a cluster (default 1).
func WithReplicas(n int) Option { return func(c *connConfig) { c.replicas = n } }

// WithMemoryStorage keeps the streams in memory instead of files: faster, lost with the server.
func WithMemoryStorage() Option { return func(c *connConfig) { c.memory = true } }

// WithAckWait sets how long a job a worker took may go without word from it (its in-progress
// acks, sent while the job runs) before it goes to another worker (default 30s): the time a
// job waits after its worker was killed.
func WithAckWait(d time.Duration) Option { return func(c *connConfig) { c.ackWait = d } }

// WithMaxAttempts sets how many times a job is tried before it goes to the dead-letter subject
// (default 5); a worker killed under a job counts as an attempt.
func WithMaxAttempts(n int) Option { return func(c *connConfig) { c.maxAttempts = n } }

// WithObjectStore sends a job's input, and a worker's result, through the queue's object
// store (bucket NAME_DATA) when it is over above bytes, instead of in the message: the
// server's max payload then bounds only what stays in messages (default: never, and inputs
// over the max payload are refused).
func WithObjectStore(above int) Option { return func(c *connConfig) { c.objectAbove = above } }

// Connect connects to the queue and makes its streams if they do not exist: with WithURL to
// those servers, with WithServer to that embedded server, and with neither to an embedded
// server it starts (WithEmbedded). It fails with ErrNoServer when no server answers within ctx,
// and with ErrStreamSettings when a stream it needs exists with other settings.
func Connect(ctx context.Context, opts ...Option) (*Conn, error) {
	c := connConfig{name: "gpuactor", replicas: 1, ackWait: 30 * time.Second, maxAttempts: 5, dupWindow: 2 * time.Minute}
	for _, o := range opts {
		o(&c)
	}
	if err := checkName("queue name", c.name); err != nil {
		return nil, err
	}
	if c.replicas < 1 || c.replicas > 5 || c.ackWait <= 0 || c.maxAttempts < 1 || c.objectAbove < 0 {
		return nil, fmt.Errorf("jetstream: replicas %d (1 to 5), ack wait %v (> 0), max attempts %d (>= 1), object store above %d (>= 0)",
			c.replicas, c.ackWait, c.maxAttempts, c.objectAbove)
	}
	conn := &Conn{subj: subjects{c.name}, cfg: c}
	no := nats.GetDefaultOptions()
	no.MaxReconnect = -1
	for _, o := range c.natsOpts {
		if err := o(&no); err != nil {
			return nil, fmt.Errorf("jetstream: NATS option: %w", err)
		}
	}
	if dl, ok := ctx.Deadline(); ok {
		no.Timeout = time.Until(dl)
	}
	// The server tells of denied subjects asynchronously: hand them to the calls waiting on
	// them, then to the user's handler, if any.
	conn.denied.inbox = nats.InboxPrefix
	if no.InboxPrefix != "" {
		conn.denied.inbox = no.InboxPrefix + "."
	}
	userCB := no.AsyncErrorCB
	no.AsyncErrorCB = func(nc *nats.Conn, sub *nats.Subscription, err error) {
		conn.denied.note(err)
		if userCB != nil {
			userCB(nc, sub, err)
		}
	}
	var err error
	switch {
	case len(c.urls) > 0:
		where := strings.Join(c.urls, ",")
		no.Servers = strings.Split(where, ",")
		if conn.nc, err = no.Connect(); err != nil {
			if r := refusal(where, err); r != nil {
				return nil, r
			}
			return nil, fmt.Errorf("%w at %s: %w", ErrNoServer, where, err)
		}
	default:
		srv := c.server
		if srv == nil {
			if srv, err = StartServer(c.serverOpts...); err != nil {
				return nil, err
			}
			conn.owned = srv
		}
		no.Servers = nil
		_ = nats.InProcessServer(srv.ns)(&no)
		if conn.nc, err = no.Connect(); err != nil {
			conn.shutOwned()
			return nil, fmt.Errorf("%w (embedded): %w", ErrNoServer, err)
		}
	}
	if conn.js, err = jetstream.New(conn.nc); err == nil {
		err = conn.ensure(ctx)
	}
	if err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// ensure makes the job, result and dead-letter streams, the error bucket and the object
// store, or checks those that exist. It looks each up before it makes it, so that a user
// allowed only to look them up (a submitter) connects once a worker or an admin made them.
func (c *Conn) ensure(ctx context.Context) error {
	storage := jetstream.FileStorage
	if c.cfg.memory {
		storage = jetstream.MemoryStorage
	}
	want := []jetstream.StreamConfig{
		{Name: c.subj.jobStream(), Subjects: []string{c.subj.jobs("*")}, Retention: jetstream.WorkQueuePolicy,
			Storage: storage, Replicas: c.cfg.replicas, Duplicates: c.cfg.dupWindow},
		{Name: c.subj.resultStream(), Subjects: []string{c.subj.results("*.*")}, Retention: jetstream.LimitsPolicy,
			Storage: storage, Replicas: c.cfg.replicas, Duplicates: c.cfg.dupWindow, MaxAge: time.Hour},
		{Name: c.subj.deadStream(), Subjects: []string{c.subj.dead("*")}, Retention: jetstream.LimitsPolicy,
			Storage: storage, Replicas: c.cfg.replicas},
	}
	for _, sc := range want {
		if err := c.ensureStream(ctx, sc); err != nil {
			return err
		}
	}
	kvName := c.subj.errorBucket()
	err := c.denied.guard(ctx, func(ctx context.Context) error {
		_, err := c.js.KeyValue(ctx, kvName)
		if errors.Is(err, jetstream.ErrBucketNotFound) {
			_, err = c.js.CreateKeyValue(ctx, jetstream.KeyValueConfig{
				Bucket: kvName, TTL: 24 * time.Hour, Storage: storage, Replicas: c.cfg.replicas,
			})
			if errors.Is(err, jetstream.ErrBucketExists) {
				_, err = c.js.KeyValue(ctx, kvName) // made meanwhile by another
			}
		}
		return err
	}, "KV_"+kvName)
	if err != nil {
		return fmt.Errorf("jetstream: error bucket %s: %w", kvName, c.noServer(err))
	}
	objName := c.subj.dataBucket()
	err = c.denied.guard(ctx, func(ctx context.Context) error {
		var err error
		c.obj, err = c.js.ObjectStore(ctx, objName)
		if errors.Is(err, jetstream.ErrBucketNotFound) || errors.Is(err, jetstream.ErrStreamNotFound) {
			c.obj, err = c.js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{
				Bucket: objName, TTL: 24 * time.Hour, Storage: storage, Replicas: c.cfg.replicas,
			})
			if errors.Is(err, jetstream.ErrBucketExists) {
				c.obj, err = c.js.ObjectStore(ctx, objName) // made meanwhile by another
			}
		}
		return err
	}, "OBJ_"+objName)
	if err != nil {
		return fmt.Errorf("jetstream: object store %s: %w", objName, c.noServer(err))
	}
	return nil
}

// ensureStream makes stream sc, or checks that the stream of its name has its settings.
func (c *Conn) ensureStream(ctx context.Context, sc jetstream.StreamConfig) error {
	var s jetstream.Stream
	err := c.denied.guard(ctx, func(ctx context.Context) error {
		var err error
		s, err = c.js.Stream(ctx, sc.Name)
		if !errors.Is(err, jetstream.ErrStreamNotFound) {
			return err
		}
		if _, err = c.js.CreateStream(ctx, sc); !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			s = nil // made as asked
			return err
		}
		s, err = c.js.Stream(ctx, sc.Name) // made meanwhile by another
		return err
	}, sc.Name)
	if err != nil {
		return fmt.Errorf("jetstream: stream %s: %w", sc.Name, c.noServer(err))
	}
	if s == nil {
		return nil
	}
	have := s.CachedInfo().Config
	var diff []string
	if !slices.Equal(have.Subjects, sc.Subjects) {
		diff = append(diff, fmt.Sprintf("subjects %v, want %v", have.Subjects, sc.Subjects))
	}
	if have.Retention != sc.Retention {
		diff = append(diff, fmt.Sprintf("retention %v, want %v", have.Retention, sc.Retention))
	}
	if have.Storage != sc.Storage {
		diff = append(diff, fmt.Sprintf("storage %v, want %v", have.Storage, sc.Storage))
	}
	if have.Replicas != sc.Replicas {
		diff = append(diff, fmt.Sprintf("replicas %d, want %d", have.Replicas, sc.Replicas))
	}
	if len(diff) == 0 {
		return nil // differs in what this package does not depend on
	}
	return fmt.Errorf("%w: %s has %s", ErrStreamSettings, sc.Name, strings.Join(diff, "; "))
}

// noServer names a JetStream that does not answer.
func (c *Conn) noServer(err error) error {
	if errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrJetStreamNotEnabled) {
		return fmt.Errorf("%w (JetStream not enabled on the server?): %w", ErrNoServer, err)
	}
	return err
}

// MaxPayload is the largest message the server takes, in bytes.
func (c *Conn) MaxPayload() int64 { return c.nc.MaxPayload() }

// Close closes the connection, and the embedded server Connect started, if any.
func (c *Conn) Close() {
	if c.nc != nil {
		c.nc.Close()
	}
	c.shutOwned()
}

func (c *Conn) shutOwned() {
	if c.owned != nil {
		c.owned.Shutdown()
		c.owned = nil
	}
}

// toObject says whether n bytes go through the object store.
func (c *Conn) toObject(n int) bool { return c.cfg.objectAbove > 0 && n > c.cfg.objectAbove }

// putObject stores data under name, for a message that carries its name instead.
func (c *Conn) putObject(ctx context.Context, m *nats.Msg, name string, data []byte) error {
	err := c.guardObjects(ctx, func(ctx context.Context) error {
		_, err := c.obj.PutBytes(ctx, name, data)
		return err
	})
	if err != nil {
		return fmt.Errorf("jetstream: object %s: %w", name, err)
	}
	m.Header.Set(hdrObject, name)
	m.Header.Set(hdrSize, strconv.Itoa(len(data)))
	return nil
}

// payload is a message's data: in it, or in the object it names.
func (c *Conn) payload(ctx context.Context, h nats.Header, data []byte) ([]byte, error) {
	name := h.Get(hdrObject)
	if name == "" {
		return data, nil
	}
	var b []byte
	err := c.guardObjects(ctx, func(ctx context.Context) error {
		var err error
		b, err = c.obj.GetBytes(ctx, name)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("jetstream: object %s: %w", name, err)
	}
	return b, nil
}

// dropObject deletes the object a message named, once it is of no more use.
func (c *Conn) dropObject(ctx context.Context, h nats.Header) {
	if name := h.Get(hdrObject); name != "" {
		_ = c.guardObjects(ctx, func(ctx context.Context) error { return c.obj.Delete(ctx, name) })
	}
}

// guardObjects runs f, a call on the object store, failing at once on a denied subject.
func (c *Conn) guardObjects(ctx context.Context, f func(context.Context) error) error {
	b := c.subj.dataBucket()
	return c.denied.guard(ctx, f, "OBJ_"+b, "$O."+b+".")
}

// guardErrors runs f, a call on the error bucket, failing at once on a denied subject.
func (c *Conn) guardErrors(ctx context.Context, f func(context.Context) error) error {
	b := c.subj.errorBucket()
	return c.denied.guard(ctx, f, "KV_"+b, "$KV."+b+".")
}

// size is a message's payload size: its data's, or the object's it names.
func size(h nats.Header, data []byte) int {
	if n, err := strconv.Atoi(h.Get(hdrSize)); err == nil && h.Get(hdrObject) != "" {
		return n
	}
	return len(data)
}
