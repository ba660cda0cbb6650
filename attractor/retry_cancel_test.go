package attractor

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// retryForever is a pipeline whose only work node asks for a retry on
// every attempt, with a backoff long enough that only cancellation can
// end the wait within the test's deadline.
const retryForever = `digraph t {
	retry.backoff.initial="1h"; retry.backoff.max="1h"
	start [shape=Mdiamond]; done [shape=Msquare]
	work [shape=parallelogram, max_retries=5, tool_command="echo '{\"status\":\"retry\"}' > $KILROY_STAGE_STATUS_PATH"]
	start -> work
	work -> done [condition="outcome!=fail"]
	work -> done [condition="outcome=fail"]
}`

// cancelOnRetry is a Listener that cancels the run as soon as an attempt
// finishes with a retry still to come, i.e. just before the backoff wait.
type cancelOnRetry struct {
	NopListener
	cancel context.CancelFunc
}

func (c cancelOnRetry) AttemptFinished(_ context.Context, ev AttemptFinished) error {
	if !ev.Final {
		c.cancel()
	}
	return nil
}

// Cancelling the run while it waits to retry must end the wait at once
// and the run as canceled, with no further attempt.
func TestRetryBackoffCanceled(t *testing.T) {
	tests := []struct {
		name string
		// blocking replaces RunConfig.Sleep with one that only returns
		// when ctx is done; otherwise the engine's own timer is used and
		// the listener cancels right before the wait.
		blocking bool
	}{
		{"injected sleep blocks until canceled", true},
		{"default timer sleep", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			waiting := make(chan time.Duration, 1)
			sleepErr := make(chan error, 1)
			if tt.blocking {
				h.cfg.Sleep = func(ctx context.Context, d time.Duration) error {
					waiting <- d
					<-ctx.Done()
					sleepErr <- ctx.Err()
					return ctx.Err()
				}
			} else {
				h.cfg.Sleep = nil
				h.cfg.Listener = cancelOnRetry{cancel: cancel}
			}
			p := mustLoad(t, retryForever)

			done := make(chan *RunResult, 1)
			go func() {
				res, err := Run(ctx, p, h.cfg)
				if err != nil {
					t.Errorf("Run: %v", err)
				}
				done <- res
			}()
			if tt.blocking {
				select {
				case d := <-waiting:
					if d != time.Hour {
						t.Errorf("backoff wait = %v, want 1h", d)
					}
				case <-time.After(30 * time.Second):
					t.Fatal("the run never started waiting to retry")
				}
				cancel()
			}
			var res *RunResult
			select {
			case res = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("the run did not end after cancel: the backoff wait ignores the context")
			}
			if res == nil {
				t.Fatal("Run returned no result")
			}
			if tt.blocking {
				if err := <-sleepErr; !errors.Is(err, context.Canceled) {
					t.Errorf("Sleep returned %v, want context.Canceled", err)
				}
			}

			got := []any{res.Status, res.FailureClass, res.FailedNode, len(h.host.execs)}
			want := []any{StatusFail, ClassCanceled, "work", 1}
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("run status, class, failed node, attempts (-got +want):\n%s\nreason: %s", diff, res.FailureReason)
			}
			o := res.Outcomes["work"]
			if o.Status != StatusFail || o.FailureClass != ClassCanceled || !strings.Contains(o.FailureReason, "canceled while waiting to retry") {
				t.Errorf("work outcome = %s/%s %q, want fail/canceled while waiting to retry", o.Status, o.FailureClass, o.FailureReason)
			}
		})
	}
}
