package ghapp

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestOnceDoesNotWait: a request sent Once that meets a secondary rate
// limit the App would wait out (3 s, under MaxWait) comes back at once
// with the wait; nothing is slept or sent again.
func TestOnceDoesNotWait(t *testing.T) {
	f := newFixture(t, nil)
	c := f.client(t)
	id, err := c.CreateCheckRun(t.Context(), f.r, CheckRunCreate{Name: "kilroy/ci", HeadSHA: f.sha, ExternalID: "r1"})
	if err != nil {
		t.Fatalf("CreateCheckRun: %v", err)
	}
	f.srv.FailNext("PATCH", "/api/v3/repos/*/*/check-runs/*", 1, http.StatusTooManyRequests, map[string]string{"Retry-After": "3"})
	err = c.UpdateCheckRun(Once(t.Context()), f.r, id, CheckRunUpdate{Status: "in_progress"})
	var rl *RateLimitedError
	if !errors.As(err, &rl) || rl.Wait != 3*time.Second || !rl.Secondary {
		t.Fatalf("UpdateCheckRun Once: %v, want a secondary rate limit of 3s", err)
	}
	if s := f.clock.Sleeps(); len(s) != 0 {
		t.Errorf("slept %v sending Once", s)
	}
	if diff := cmp.Diff(statuses(f.requests("PATCH", "")), []int{429}); diff != "" {
		t.Errorf("PATCH statuses (-got +want):\n%s", diff)
	}

	// While the installation sits out a limit, a Once request is not sent
	// and says how long is left; an ordinary one waits and goes.
	f.app.state(f.inst).pause.extend(f.clock.Now().Add(30 * time.Second))
	err = c.UpdateCheckRun(Once(t.Context()), f.r, id, CheckRunUpdate{Status: "in_progress"})
	if !errors.As(err, &rl) || rl.Wait != 30*time.Second {
		t.Fatalf("UpdateCheckRun Once in a pause: %v, want a rate limit of 30s", err)
	}
	if n := len(f.requests("PATCH", "")); n != 1 {
		t.Errorf("%d PATCHes sent, want none in the pause", n-1)
	}
	if err := c.UpdateCheckRun(t.Context(), f.r, id, CheckRunUpdate{Status: "in_progress"}); err != nil {
		t.Fatalf("UpdateCheckRun in a pause: %v", err)
	}
	if diff := cmp.Diff(f.clock.Sleeps(), []time.Duration{30 * time.Second}); diff != "" {
		t.Errorf("waits (-got +want):\n%s", diff)
	}
}
