package jetstream

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Server is a JetStream server embedded in this process: the default when no URL is given.
type Server struct {
	ns  *server.Server
	url string // "" when it accepts in-process connections only
}

// ServerOption configures StartServer.
type ServerOption func(*serverConfig)

type serverConfig struct {
	dir        string
	loopback   bool
	port       int
	maxPayload int32
}

// WithStoreDir keeps the server's files under dir (default: gpuactor-jetstream in the user
// cache dir). Jobs queued survive a restart of the process that uses the same dir.
func WithStoreDir(dir string) ServerOption { return func(c *serverConfig) { c.dir = dir } }

// WithLoopback makes the server listen on 127.0.0.1:port (0: a free port), for workers and
// clients in other processes of this host. Without it the server takes in-process connections
// only and opens no socket.
func WithLoopback(port int) ServerOption {
	return func(c *serverConfig) { c.loopback, c.port = true, port }
}

// WithMaxPayload sets the largest message the server takes, in bytes (default 1 MiB, the
// NATS default; at most 64 MiB).
func WithMaxPayload(n int32) ServerOption { return func(c *serverConfig) { c.maxPayload = n } }

// StartServer starts an embedded JetStream server and returns once it takes connections.
func StartServer(opts ...ServerOption) (*Server, error) {
	c := serverConfig{}
	for _, o := range opts {
		o(&c)
	}
	if c.dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return nil, fmt.Errorf("jetstream: no store dir given and no user cache dir: %w", err)
		}
		c.dir = filepath.Join(cache, "gpuactor-jetstream")
	}
	if c.maxPayload < 0 || c.maxPayload > 64<<20 {
		return nil, fmt.Errorf("jetstream: max payload %d: want 0 to 64 MiB", c.maxPayload)
	}
	so := &server.Options{
		ServerName: "gpuactor-embedded",
		JetStream:  true,
		StoreDir:   c.dir,
		DontListen: !c.loopback,
		Host:       "127.0.0.1",
		Port:       c.port,
		MaxPayload: c.maxPayload,
		NoSigs:     true,
		NoLog:      true,
	}
	if c.loopback && c.port == 0 {
		so.Port = server.RANDOM_PORT
	}
	ns, err := server.NewServer(so)
	if err != nil {
		return nil, fmt.Errorf("jetstream: embedded server: %w", err)
	}
	ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		return nil, errors.New("jetstream: embedded server did not start within 10s")
	}
	s := &Server{ns: ns}
	if c.loopback {
		s.url = ns.ClientURL()
	}
	return s, nil
}

// URL is the server's loopback address for other processes, "" when it has none.
func (s *Server) URL() string { return s.url }

// Shutdown stops the server and returns once it has stopped.
func (s *Server) Shutdown() {
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
}

// Conn is the server's in-process connection provider, for nats.InProcessServer.
func (s *Server) Conn() nats.InProcessConnProvider { return s.ns }
