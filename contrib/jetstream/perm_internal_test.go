package jetstream

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAViolationFailsTheCallsWaitingOnItsSubjectOnly(t *testing.T) {
	var d denials
	d.inbox = "_INBOX_me."
	violation := func(kind, subject string) error {
		return fmt.Errorf("%w: Permissions Violation for %s to %q", nats.ErrPermissionViolation, kind, subject)
	}
	cases := []struct {
		kind, subject string
		names         []string
		denied        bool
	}{
		{"Publish", "$JS.API.CONSUMER.CREATE.Q_JOBS.h_x.q.jobs.x", []string{"Q_JOBS"}, true},
		{"Publish", "$JS.API.STREAM.INFO.Q_JOBS", []string{"Q_RESULTS"}, false},
		{"Publish", "$JS.API.STREAM.INFO.Q_JOBS_OLD", []string{"Q_JOBS"}, false},
		{"Publish", "$JS.API.INFO", []string{"Q_JOBS"}, true},
		{"Publish", "$JS.API.INFO", []string{"q.jobs.x"}, false},
		{"Publish", "$JS.API.STREAM.INFO.Q_JOBS", []string{"q.jobs.x"}, false},
		{"Publish", "q.jobs.x", []string{"q.jobs.x"}, true},
		{"Publish", "q.jobs.y", []string{"q.jobs.x"}, false},
		{"Publish", "$O.Q_DATA.C.abc", []string{"OBJ_Q_DATA", "$O.Q_DATA."}, true},
		{"Subscription", "_INBOX_me.abc.*", []string{"q.jobs.x"}, true},
		{"Subscription", "_INBOX_other.>", []string{"q.jobs.x"}, false},
		{"Publish", "q.jobs.x", nil, false},
	}
	for _, c := range cases {
		started := make(chan struct{})
		done := make(chan error, 1)
		go func() {
			done <- d.guard(context.Background(), func(ctx context.Context) error {
				close(started)
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(200 * time.Millisecond):
					return errors.New("not cancelled")
				}
			}, c.names...)
		}()
		<-started
		d.note(violation(c.kind, c.subject))
		err := <-done
		if c.denied {
			require.ErrorIs(t, err, ErrPermission, "%s %s", c.kind, c.subject)
			assert.Contains(t, err.Error(), c.subject)
		} else {
			require.EqualError(t, err, "not cancelled", "%s %s", c.kind, c.subject)
		}
	}
	d.note(errors.New("nats: slow consumer")) // not a violation: nothing to do
	assert.Empty(t, d.watchers, "every guard took its watcher back")
}

func TestAResultSubjectIsAClientsOnly(t *testing.T) {
	s := subjects{"q"}
	assert.True(t, s.isResults("q.results.submitter.abc123"))
	for _, bad := range []string{"q.results.abc", "q.results.a.b.c", "q.jobs.a.b", "p.results.a.b", "q.results..b", "q.results.a.", "q.results.a.*"} {
		assert.False(t, s.isResults(bad), bad)
	}
}
