package jetstream

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
	"sync"

	"github.com/nats-io/nats.go"
)

// A NATS server does not answer a publish or a subscription that the user's permissions deny:
// it drops it and tells the connection asynchronously. A request on a denied subject (every
// JetStream API call is one) would wait for its whole context. denials hands each violation to
// the calls that wait on its subject, which then fail at once with ErrPermission.
type denials struct {
	inbox    string // the connection's inbox prefix, where every request's answer comes
	mu       sync.Mutex
	next     int
	watchers map[int]watcher
}

type watcher struct {
	names  []string
	cancel context.CancelCauseFunc
}

var violationRE = regexp.MustCompile(`(Publish|Subscription) to "([^"]+)"`)

// note takes an error the connection reported asynchronously and fails the calls waiting on
// the subject it denies.
func (d *denials) note(err error) {
	if !errors.Is(err, nats.ErrPermissionViolation) {
		return
	}
	m := violationRE.FindStringSubmatch(err.Error())
	if m == nil {
		return
	}
	cause := fmt.Errorf("%w: the server denies this user %s %q (see the permissions in the README)",
		ErrPermission, strings.ToLower(m[1]), m[2])
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, w := range d.watchers {
		if denies(d.inbox, m[1] == "Subscription", m[2], w.names) {
			w.cancel(cause)
		}
	}
}

// denies says whether a violation on subject concerns a call on names: the subject itself, or
// one under it for a name that ends in a dot; for a call on a stream (a name without dots), a
// JetStream API or acknowledgement subject naming it, or the account's JetStream info that
// some calls ask first; and for any call, the inbox every request's answer comes to.
func denies(inbox string, sub bool, subject string, names []string) bool {
	if sub && strings.HasPrefix(subject, inbox) {
		return true
	}
	js := strings.HasPrefix(subject, "$JS.")
	for _, n := range names {
		stream := !strings.Contains(n, ".")
		switch {
		case subject == n, strings.HasSuffix(n, ".") && strings.HasPrefix(subject, n):
			return true
		case stream && (subject == "$JS.API.INFO" || js && strings.Contains(subject+".", "."+n+".")):
			return true
		}
	}
	return false
}

// guard runs f under a context that a permission violation on names (subjects, or the streams
// of JetStream calls) cancels; f's error is then the violation, an ErrPermission.
func (d *denials) guard(ctx context.Context, f func(context.Context) error, names ...string) error {
	gctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	d.mu.Lock()
	if d.watchers == nil {
		d.watchers = map[int]watcher{}
	}
	id := d.next
	d.next++
	d.watchers[id] = watcher{names: names, cancel: cancel}
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		delete(d.watchers, id)
		d.mu.Unlock()
	}()
	err := f(gctx)
	if cause := context.Cause(gctx); err != nil && errors.Is(cause, ErrPermission) {
		return cause
	}
	return err
}

// refusal names a connection the server or its TLS refused, or returns nil for any other error.
func refusal(where string, err error) error {
	var (
		unknown x509.UnknownAuthorityError
		host    x509.HostnameError
		invalid x509.CertificateInvalidError
		verify  *tls.CertificateVerificationError
		alert   tls.AlertError
		opErr   *net.OpError
	)
	switch {
	case errors.Is(err, nats.ErrAuthorization), errors.Is(err, nats.ErrAuthExpired), errors.Is(err, nats.ErrAuthRevoked),
		errors.Is(err, nats.ErrAccountAuthExpired), errors.Is(err, nats.ErrNkeysNotSupported):
		return fmt.Errorf("%w at %s: the server refused the credentials: %w", ErrRefused, where, err)
	case errors.As(err, &unknown), errors.As(err, &host), errors.As(err, &invalid), errors.As(err, &verify):
		return fmt.Errorf("%w at %s: the server's TLS certificate is not trusted by the TLS config given: %w", ErrRefused, where, err)
	case errors.Is(err, nats.ErrSecureConnRequired), errors.Is(err, nats.ErrSecureConnWanted), errors.Is(err, nats.ErrClientCertOrRootCAsRequired):
		return fmt.Errorf("%w at %s: client and server disagree on TLS: %w", ErrRefused, where, err)
	case errors.As(err, &alert), errors.Is(err, nats.ErrTLS), errors.As(err, &opErr) && strings.Contains(opErr.Error(), "tls:"):
		// A server that wants a client certificate it does not get, or does not trust, ends
		// the connection after the handshake: the client sees an alert, or the connection
		// closed.
		return fmt.Errorf("%w at %s: TLS failed (no client certificate, or one the server does not trust?): %w", ErrRefused, where, err)
	}
	return nil
}
