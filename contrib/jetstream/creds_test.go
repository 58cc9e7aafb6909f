package jetstream_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	js "github.com/gpuactor/gpuactor/contrib/jetstream"
)

// operator is a NATS operator with one JetStream account, in the test: it signs users into
// creds files.
type operator struct {
	claims       *jwt.OperatorClaims
	account, sys nkeys.KeyPair
	resolver     *server.MemAccResolver
}

func newOperator(t *testing.T) *operator {
	t.Helper()
	okp, err := nkeys.CreateOperator()
	require.NoError(t, err)
	opub, err := okp.PublicKey()
	require.NoError(t, err)
	oc := jwt.NewOperatorClaims(opub)
	o := &operator{claims: oc, resolver: &server.MemAccResolver{}}
	account := func(js bool) nkeys.KeyPair {
		akp, err := nkeys.CreateAccount()
		require.NoError(t, err)
		apub, err := akp.PublicKey()
		require.NoError(t, err)
		ac := jwt.NewAccountClaims(apub)
		if js {
			ac.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1}
		}
		ajwt, err := ac.Encode(okp)
		require.NoError(t, err)
		require.NoError(t, o.resolver.Store(apub, ajwt))
		return akp
	}
	o.account, o.sys = account(true), account(false)
	// The operator's JWT is signed once its system account is known.
	spub, err := o.sys.PublicKey()
	require.NoError(t, err)
	oc.SystemAccount = spub
	_, err = oc.Encode(okp)
	require.NoError(t, err)
	return o
}

// creds signs a user of the account with perms (the server's permissions, as the JWT holds
// them) and writes its creds file.
func (o *operator) creds(t *testing.T, dir, name string, perms *server.Permissions) string {
	t.Helper()
	ukp, err := nkeys.CreateUser()
	require.NoError(t, err)
	upub, err := ukp.PublicKey()
	require.NoError(t, err)
	seed, err := ukp.Seed()
	require.NoError(t, err)
	uc := jwt.NewUserClaims(upub)
	uc.Name = name
	uc.Pub.Allow.Add(perms.Publish.Allow...)
	uc.Sub.Allow.Add(perms.Subscribe.Allow...)
	if perms.Response != nil {
		uc.Resp = &jwt.ResponsePermission{MaxMsgs: perms.Response.MaxMsgs, Expires: perms.Response.Expires}
	}
	ujwt, err := uc.Encode(o.account)
	require.NoError(t, err)
	b, err := jwt.FormatUserConfig(ujwt, seed)
	require.NoError(t, err)
	path := filepath.Join(dir, name+".creds")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	return path
}

// TestCredsFileUsersServeInOperatorMode runs a server in operator mode (accounts and users
// are JWTs) with a worker and a submitter that connect with creds files carrying the same
// least permissions as the secured cluster test's: the submitter's jobs complete on the
// worker, and a creds file of a user the operator never signed is refused.
func TestCredsFileUsersServeInOperatorMode(t *testing.T) {
	op := newOperator(t)
	spub, err := op.sys.PublicKey()
	require.NoError(t, err)
	ns, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true, StoreDir: t.TempDir(), NoSigs: true, NoLog: true,
		TrustedOperators: []*jwt.OperatorClaims{op.claims}, AccountResolver: op.resolver, SystemAccount: spub,
	})
	require.NoError(t, err)
	ns.Start()
	defer func() { ns.Shutdown(); ns.WaitForShutdown() }()
	require.True(t, ns.ReadyForConnections(10*time.Second))
	url := ns.ClientURL()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	wconn, err := js.Connect(ctx, js.WithURL(url), js.WithNATS(nats.UserCredentials(op.creds(t, dir, "worker", workerPermissions())),
		nats.CustomInboxPrefix(workerInbox)))
	require.NoError(t, err)
	defer wconn.Close()
	_, g := newGroup(t, 1)
	w := js.NewWorker(wconn, g)
	require.NoError(t, w.Handle("work", echo))
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- w.Serve(sctx) }()
	defer func() { stop(); assert.NoError(t, <-served) }()
	select {
	case <-w.Ready():
	case err := <-served:
		require.NoError(t, err)
	}

	sconn, err := js.Connect(ctx, js.WithURL(url), js.WithNATS(nats.UserCredentials(op.creds(t, dir, submitterUser, submitterPermissions())),
		nats.CustomInboxPrefix(submitterInbox)))
	require.NoError(t, err)
	defer sconn.Close()
	c, err := js.NewClient(ctx, sconn, js.WithClientName(submitterUser))
	require.NoError(t, err)
	defer c.Close()
	for i := range 20 {
		out, err := c.Submit(ctx, js.Job{Handler: "work", Input: fmt.Appendf(nil, "input %d", i)}).Wait(ctx)
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("input %d", i), string(out))
	}
	sw := js.NewWorker(sconn, g)
	require.NoError(t, sw.Handle("work", echo))
	require.ErrorIs(t, sw.Serve(ctx), js.ErrPermission, "the submitter may not serve")

	stranger := newOperator(t) // another operator's account: its users are not this server's
	_, err = js.Connect(ctx, js.WithURL(url), js.WithNATS(nats.UserCredentials(stranger.creds(t, dir, "stranger", submitterPermissions()))))
	require.ErrorIs(t, err, js.ErrRefused)
	assert.Contains(t, err.Error(), "credentials")
}
