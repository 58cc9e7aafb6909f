package collective

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// Handing an ID to every rank: one process serves it over TCP (ServeID) at an address the
// others know, and each of them fetches it (FetchID). The exchange is small: the server
// greets with a magic, a version and a fresh nonce; the client answers with the same magic
// and version and an HMAC-SHA256 of the nonce under the shared token (WithIDToken; all
// zeros without one); the server answers a status and, when the client proved the token,
// the ID with an HMAC of nonce and ID, which the client checks, so that neither side hands
// anything to a peer that does not hold the token.
//
// The token keeps strangers who can connect from reading the ID; it does not encrypt it, so
// anyone who can watch the traffic can still read it. The ID itself lets its holder join the
// communicator while it forms: keep it, and the token, among the ranks.

// Errors FetchID returns for a server that is there but will not hand over an ID.
var (
	// ErrNotIDServer: what answered at the address does not speak this exchange (wrong
	// magic or version, or a malformed answer).
	ErrNotIDServer = errors.New("collective: the address does not serve a collective ID")
	// ErrIDRefused: the server or the client does not hold the other's token.
	ErrIDRefused = errors.New("collective: the ID server and this process hold different tokens")
)

// idMagic opens the server's greeting and the client's answer.
var idMagic = [8]byte{'g', 'p', 'u', 'a', 'C', 'I', 'D', 0}

const (
	idVersion    = 1
	idNonceLen   = 16
	idMACLen     = sha256.Size
	idIOTimeout  = 10 * time.Second // a peer that stalls mid-exchange is dropped
	idStatusOK   = 0
	idStatusDeny = 1
)

// IDOption configures ServeID and FetchID.
type IDOption func(*idConfig)

type idConfig struct{ token []byte }

// WithIDToken sets the secret that server and clients must share: a client without it is
// refused, and a client checks that the server holds it too. Both sides must pass the same
// bytes; without the option both use none.
func WithIDToken(token []byte) IDOption {
	return func(c *idConfig) { c.token = append([]byte(nil), token...) }
}

func idMAC(token []byte, parts ...[]byte) []byte {
	m := hmac.New(sha256.New, token)
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

// IDServer serves one ID to every process that asks, until it is closed or the context it
// was started with is done.
type IDServer struct {
	ln    net.Listener
	id    ID
	token []byte
	stop  context.CancelFunc
	wg    sync.WaitGroup
	once  sync.Once
}

// ServeID starts serving id on addr ("host:port"; port 0 picks a free one, which Addr
// reports) and returns once it listens. It serves until Close is called or ctx is done.
func ServeID(ctx context.Context, addr string, id ID, opts ...IDOption) (*IDServer, error) {
	var cfg idConfig
	for _, o := range opts {
		o(&cfg)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("collective: serving the ID: %w", err)
	}
	ctx, stop := context.WithCancel(ctx)
	s := &IDServer{ln: ln, id: id, token: cfg.token, stop: stop}
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		<-ctx.Done()
		_ = ln.Close()
	}()
	go s.accept()
	return s, nil
}

// Addr is the address the server listens on, for FetchID.
func (s *IDServer) Addr() string { return s.ln.Addr().String() }

// Close stops the server and returns once no exchange is under way.
func (s *IDServer) Close() error {
	s.once.Do(s.stop)
	s.wg.Wait()
	return nil
}

func (s *IDServer) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer c.Close()
			_ = s.serve(c)
		}()
	}
}

// serve runs one exchange; any deviation ends it without the ID.
func (s *IDServer) serve(c net.Conn) error {
	if err := c.SetDeadline(time.Now().Add(idIOTimeout)); err != nil {
		return err
	}
	nonce := make([]byte, idNonceLen)
	if _, err := rand.Read(nonce); err != nil {
		return err
	}
	hello := append(append(idMagic[:len(idMagic):len(idMagic)], idVersion), nonce...)
	if _, err := c.Write(hello); err != nil {
		return err
	}
	reply := make([]byte, len(idMagic)+1+idMACLen)
	if _, err := io.ReadFull(c, reply); err != nil {
		return err
	}
	if [8]byte(reply[:8]) != idMagic || reply[8] != idVersion {
		return ErrNotIDServer // a stranger: say nothing more
	}
	if !hmac.Equal(reply[9:], idMAC(s.token, nonce)) {
		_, err := c.Write(append(idMagic[:len(idMagic):len(idMagic)], idVersion, idStatusDeny))
		return err
	}
	ans := append(idMagic[:len(idMagic):len(idMagic)], idVersion, idStatusOK)
	ans = append(ans, s.id[:]...)
	ans = append(ans, idMAC(s.token, nonce, s.id[:])...)
	_, err := c.Write(ans)
	return err
}

// FetchID fetches the ID a ServeID at addr serves, retrying while nothing answers there (the
// serving process may not have started yet) until ctx is done. A server that answers but
// will not hand over an ID ends the wait at once: ErrNotIDServer or ErrIDRefused.
func FetchID(ctx context.Context, addr string, opts ...IDOption) (ID, error) {
	var cfg idConfig
	for _, o := range opts {
		o(&cfg)
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return ID{}, fmt.Errorf("collective: fetching the ID: address %q: %w", addr, err)
	}
	backoff := 20 * time.Millisecond
	var last error
	for {
		id, final, err := fetchOnce(ctx, addr, cfg.token)
		if err == nil {
			return id, nil
		}
		if final {
			return ID{}, fmt.Errorf("collective: fetching the ID from %s: %w", addr, err)
		}
		last = err
		select {
		case <-ctx.Done():
			return ID{}, fmt.Errorf("collective: fetching the ID from %s: %w (last attempt: %v)", addr, ctx.Err(), last)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

// fetchOnce runs one exchange; final reports an answer that retrying will not change.
func fetchOnce(ctx context.Context, addr string, token []byte) (id ID, final bool, err error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return id, false, err
	}
	defer c.Close()
	deadline := time.Now().Add(idIOTimeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	if err := c.SetDeadline(deadline); err != nil {
		return id, false, err
	}
	hello := make([]byte, len(idMagic)+1+idNonceLen)
	if _, err := io.ReadFull(c, hello); err != nil {
		return id, true, fmt.Errorf("%w: greeting: %v", ErrNotIDServer, err)
	}
	if [8]byte(hello[:8]) != idMagic {
		return id, true, ErrNotIDServer
	}
	if hello[8] != idVersion {
		return id, true, fmt.Errorf("%w: version %d, this program speaks %d", ErrNotIDServer, hello[8], idVersion)
	}
	nonce := hello[9:]
	reply := append(append(idMagic[:len(idMagic):len(idMagic)], idVersion), idMAC(token, nonce)...)
	if _, err := c.Write(reply); err != nil {
		return id, false, err
	}
	head := make([]byte, len(idMagic)+2)
	if _, err := io.ReadFull(c, head); err != nil {
		return id, true, fmt.Errorf("%w: answer: %v", ErrNotIDServer, err)
	}
	if [8]byte(head[:8]) != idMagic || head[8] != idVersion {
		return id, true, ErrNotIDServer
	}
	switch head[9] {
	case idStatusOK:
	case idStatusDeny:
		return id, true, ErrIDRefused
	default:
		return id, true, fmt.Errorf("%w: status %d", ErrNotIDServer, head[9])
	}
	body := make([]byte, len(id)+idMACLen)
	if _, err := io.ReadFull(c, body); err != nil {
		return id, true, fmt.Errorf("%w: ID: %v", ErrNotIDServer, err)
	}
	copy(id[:], body)
	if !hmac.Equal(body[len(id):], idMAC(token, nonce, id[:])) {
		return ID{}, true, fmt.Errorf("%w: the server does not hold this process's token", ErrIDRefused)
	}
	return id, false, nil
}
