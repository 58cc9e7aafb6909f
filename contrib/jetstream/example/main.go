// Command example serves GPU jobs through JetStream: a worker per GPU host, and a client in an
// HTTP service, with an embedded server by default and a NATS cluster by URL.
//
//	go run ./example -sim 2 -demo 100                       # one process, embedded server, simulator
//	go run ./example -sim 2 -http 127.0.0.1:8080            # the same, serving POST /reverse
//	go run ./example -role worker -url nats://a:4222,nats://b:4222 -creds user.creds    # a GPU host
//	go run ./example -role client -url nats://a:4222 -creds user.creds -http :8080     # the service
//
// Against a cluster with mutual TLS and per-user permissions (the README lists them), a worker
// with an nkey and a client with a password, each with an inbox of its own:
//
//	go run ./example -role worker -url nats://a:4222 -nkey worker.nk -inbox _INBOX_worker \
//		-tls-cert host.pem -tls-key host-key.pem -tls-ca ca.pem
//	go run ./example -role client -url nats://a:4222 -user submitter -password "$PW" -inbox _INBOX_submitter \
//		-client-name submitter -tls-cert svc.pem -tls-key svc-key.pem -tls-ca ca.pem -http :8080
//
// The handler is code of the worker: a request names it and carries bytes, which go to the
// device and come back reversed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/nats-io/nats.go"

	js "github.com/gpuactor/gpuactor/contrib/jetstream"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/group"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

type config struct {
	role, url, creds, store, http string
	nkey, user, password, inbox   string
	tlsCert, tlsKey, tlsCA        string
	clientName                    string
	sim, demo                     int
}

func main() {
	var c config
	flag.StringVar(&c.role, "role", "all", "all (worker and service in one process), worker or client")
	flag.StringVar(&c.url, "url", "", "NATS servers, comma-separated; empty: an embedded server in this process")
	flag.StringVar(&c.creds, "creds", "", "with -url: a NATS credentials file")
	flag.StringVar(&c.nkey, "nkey", "", "with -url: a file with the user's nkey seed")
	flag.StringVar(&c.user, "user", "", "with -url: a user name (and -password)")
	flag.StringVar(&c.password, "password", "", "with -user: its password")
	flag.StringVar(&c.inbox, "inbox", "", "with -url: the inbox prefix the user's permissions allow (default _INBOX)")
	flag.StringVar(&c.tlsCert, "tls-cert", "", "with -url: a client certificate (PEM), with -tls-key, for mutual TLS")
	flag.StringVar(&c.tlsKey, "tls-key", "", "with -tls-cert: its key (PEM)")
	flag.StringVar(&c.tlsCA, "tls-ca", "", "with -url: the CA certificates (PEM) that the servers' certificates are checked against")
	flag.StringVar(&c.clientName, "client-name", "", "the name in the client's results subject, which its permissions allow (default client)")
	flag.StringVar(&c.store, "store", "", "the embedded server's files (default: in the user cache dir)")
	flag.StringVar(&c.http, "http", "127.0.0.1:8080", "the service's address")
	flag.IntVar(&c.sim, "sim", 0, "simulated devices instead of the GPUs")
	flag.IntVar(&c.demo, "demo", 0, "send this many requests to the service, print a summary and exit")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, c); err != nil {
		fmt.Fprintln(os.Stderr, "example:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, c config) error {
	if c.role != "all" && c.role != "worker" && c.role != "client" {
		return fmt.Errorf("-role %q: want all, worker or client", c.role)
	}
	if c.role != "all" && c.url == "" {
		return fmt.Errorf("-role %s needs -url: an embedded server serves its own process only", c.role)
	}
	opts := []js.Option{js.WithQueueName("example")}
	if c.url != "" {
		opts = append(opts, js.WithURL(strings.Split(c.url, ",")...))
		nopts, err := natsOptions(c)
		if err != nil {
			return err
		}
		opts = append(opts, js.WithNATS(nopts...))
	} else {
		store := c.store
		if store == "" && c.demo > 0 {
			dir, err := os.MkdirTemp("", "gpuactor-example")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			store = dir
		}
		if store != "" {
			opts = append(opts, js.WithEmbedded(js.WithStoreDir(store)))
		}
	}
	conn, err := js.Connect(ctx, opts...)
	if err != nil {
		return err
	}
	defer conn.Close()

	served := make(chan error, 1)
	wctx, drain := context.WithCancel(ctx)
	defer drain()
	if c.role != "client" {
		w, closeGroup, err := newWorker(ctx, c, conn)
		if err != nil {
			return err
		}
		defer closeGroup()
		go func() { served <- w.Serve(wctx) }() // drains when wctx ends
		select {
		case <-w.Ready():
		case err := <-served:
			return err
		}
		if c.role == "worker" {
			fmt.Println("worker serving; Ctrl-C drains and stops it")
			return <-served
		}
		defer func() { drain(); <-served }()
	}
	var copts []js.ClientOption
	if c.clientName != "" {
		copts = append(copts, js.WithClientName(c.clientName))
	}
	client, err := js.NewClient(ctx, conn, copts...)
	if err != nil {
		return err
	}
	defer client.Close()
	return serve(ctx, c, client)
}

// natsOptions are the credentials and TLS settings of the flags.
func natsOptions(c config) ([]nats.Option, error) {
	var opts []nats.Option
	if c.creds != "" {
		opts = append(opts, nats.UserCredentials(c.creds))
	}
	if c.nkey != "" {
		o, err := nats.NkeyOptionFromSeed(c.nkey)
		if err != nil {
			return nil, fmt.Errorf("-nkey: %w", err)
		}
		opts = append(opts, o)
	}
	if c.user != "" {
		opts = append(opts, nats.UserInfo(c.user, c.password))
	}
	if c.inbox != "" {
		opts = append(opts, nats.CustomInboxPrefix(c.inbox))
	}
	if (c.tlsCert == "") != (c.tlsKey == "") {
		return nil, errors.New("-tls-cert and -tls-key go together")
	}
	if c.tlsCert != "" {
		opts = append(opts, nats.ClientCert(c.tlsCert, c.tlsKey))
	}
	if c.tlsCA != "" {
		opts = append(opts, nats.RootCAs(c.tlsCA))
	}
	return opts, nil
}

// newWorker is a worker over this host's devices, with the handler registered.
func newWorker(ctx context.Context, c config, conn *js.Conn) (*js.Worker, func(), error) {
	var dopts []device.Option
	if c.sim > 0 {
		dopts = append(dopts, device.WithSimulator(sim.New(sim.WithDevices(c.sim))))
	}
	devs, err := device.OpenAll(ctx, dopts...)
	if err != nil {
		return nil, nil, err
	}
	closeDevs := func() {
		for _, d := range devs {
			_ = d.Close()
		}
	}
	g, err := group.New(ctx, devs)
	if err != nil {
		closeDevs()
		return nil, nil, err
	}
	w := js.NewWorker(conn, g)
	if err := w.Handle("reverse", reverse); err != nil {
		closeDevs()
		return nil, nil, err
	}
	return w, func() { _ = g.Close(context.Background()); closeDevs() }, nil
}

// reverse sends its input to the device and back, and reverses it.
func reverse(ctx context.Context, d *device.Device, s *streams.Stream, in []byte) ([]byte, error) {
	if len(in) == 0 {
		return nil, js.Permanent(errors.New("empty input"))
	}
	buf, err := d.MallocBytes(ctx, uint64(len(in)))
	if err != nil {
		return nil, err
	}
	defer buf.Close(context.WithoutCancel(ctx))
	host, err := d.MallocPinnedBytes(ctx, uint64(len(in)))
	if err != nil {
		return nil, err
	}
	defer host.Close(context.WithoutCancel(ctx))
	copy(host.Host(), in)
	s.CopyHostToDevice(ctx, buf, host)
	if err := s.CopyDeviceToHost(ctx, host, buf).Wait(ctx); err != nil {
		return nil, err
	}
	out := make([]byte, len(in))
	for i, b := range host.Host() {
		out[len(out)-1-i] = b
	}
	return out, nil
}
