package ghapp

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSecondaryRateLimitIsWaitedOut(t *testing.T) {
	tests := []struct {
		name   string
		status int
		header map[string]string
		want   time.Duration
	}{
		{"403 with Retry-After", http.StatusForbidden, map[string]string{"Retry-After": "7"}, 7 * time.Second},
		{"429 with Retry-After", http.StatusTooManyRequests, map[string]string{"Retry-After": "3"}, 3 * time.Second},
		{"403 with only the message", http.StatusForbidden, nil, time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			c := f.client(t)
			id, err := c.CreateCheckRun(t.Context(), f.r, CheckRunCreate{Name: "kilroy/ci", HeadSHA: f.sha})
			if err != nil {
				t.Fatalf("CreateCheckRun: %v", err)
			}
			f.srv.FailNext("PATCH", "/api/v3/repos/*/*/check-runs/*", 1, tt.status, tt.header)
			if err := c.UpdateCheckRun(t.Context(), f.r, id, CheckRunUpdate{Status: "in_progress"}); err != nil {
				t.Fatalf("UpdateCheckRun: %v", err)
			}
			if diff := cmp.Diff(f.clock.Sleeps(), []time.Duration{tt.want}); diff != "" {
				t.Errorf("waits (-got +want):\n%s", diff)
			}
			if diff := cmp.Diff(statuses(f.requests("PATCH", "")), []int{tt.status, 200}); diff != "" {
				t.Errorf("PATCH statuses (-got +want):\n%s", diff)
			}
		})
	}
}

func TestSecondaryRateLimitRetriesPOST(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.AddPull("acme", "widgets", 3, f.sha, "main", "", nil)
	f.srv.FailNext("POST", "/api/v3/repos/*/*/issues/*/comments", 1, http.StatusForbidden, map[string]string{"Retry-After": "2"})
	if _, err := f.client(t).CreateComment(t.Context(), f.r, 3, "hello"); err != nil {
		t.Fatalf("CreateComment: %v", err)
	}
	if n := len(f.srv.Comments("acme", "widgets")); n != 1 {
		t.Errorf("%d comments, want 1", n)
	}
}

func primaryLimit(reset time.Time) map[string]string {
	return map[string]string{
		"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "0",
		"X-RateLimit-Reset": strconv.FormatInt(reset.Unix(), 10),
	}
}

func TestPrimaryRateLimitWaitsForReset(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.AddPull("acme", "widgets", 3, f.sha, "main", "", []string{"a.go"})
	reset := f.clock.Now().Truncate(time.Second).Add(30 * time.Second)
	f.srv.FailNext("GET", "/api/v3/repos/*/*/pulls/3", 1, http.StatusForbidden, primaryLimit(reset))
	pr, err := f.client(t).PullRequest(t.Context(), f.r, 3)
	if err != nil {
		t.Fatalf("PullRequest: %v", err)
	}
	if pr.Number != 3 {
		t.Errorf("PullRequest number = %d, want 3", pr.Number)
	}
	sleeps := f.clock.Sleeps()
	if len(sleeps) != 1 {
		t.Fatalf("waits = %v, want one", sleeps)
	}
	// Until the reset plus a second of slack, measured from the clock.
	if want := 31 * time.Second; sleeps[0] > want || sleeps[0] < want-time.Second {
		t.Errorf("wait = %v, want about %v", sleeps[0], want)
	}
}

func TestPrimaryRateLimitPausesTheInstallation(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.AddPull("acme", "widgets", 3, f.sha, "main", "", nil)
	reset := f.clock.Now().Truncate(time.Second).Add(20 * time.Second)
	f.srv.FailNext("GET", "/api/v3/repos/*/*/pulls/3", 1, http.StatusForbidden, primaryLimit(reset))
	if _, err := f.client(t).PullRequest(t.Context(), f.r, 3); err != nil {
		t.Fatalf("PullRequest: %v", err)
	}
	if n := len(f.clock.Sleeps()); n != 1 {
		t.Fatalf("%d waits, want 1", n)
	}
	// The clock has moved past the reset: another client of the same
	// installation goes straight through.
	if _, err := f.client(t).PullRequest(t.Context(), f.r, 3); err != nil {
		t.Fatalf("PullRequest: %v", err)
	}
	if n := len(f.clock.Sleeps()); n != 1 {
		t.Errorf("%d waits after the reset, want still 1", n)
	}
}

func TestLongRateLimitFailsWithTheWait(t *testing.T) {
	f := newFixture(t, nil)
	reset := f.clock.Now().Truncate(time.Second).Add(time.Hour)
	f.srv.FailNext("GET", "/api/v3/repos/*/*/pulls/3", 1, http.StatusForbidden, primaryLimit(reset))
	_, err := f.client(t).PullRequest(t.Context(), f.r, 3)
	var rl *RateLimitedError
	if !errors.As(err, &rl) {
		t.Fatalf("error = %v, want a *RateLimitedError", err)
	}
	if rl.Secondary || rl.Wait < 59*time.Minute || rl.Wait > time.Hour+2*time.Second {
		t.Errorf("RateLimitedError = %+v, want a primary limit of about an hour", rl)
	}
	if s := f.clock.Sleeps(); len(s) != 0 {
		t.Errorf("waited %v, want no wait beyond MaxWait", s)
	}

	f.srv.FailNext("GET", "/api/v3/repos/*/*/pulls/4", 1, http.StatusForbidden, map[string]string{"Retry-After": "600"})
	_, err = f.client(t).PullRequest(t.Context(), f.r, 4)
	if !errors.As(err, &rl) || !rl.Secondary || rl.Wait != 10*time.Minute {
		t.Errorf("error = %v, want a secondary *RateLimitedError of 10m", err)
	}
}

func TestWaitEndsWithContext(t *testing.T) {
	f := newFixture(t, nil)
	c := f.client(t)
	if _, err := c.CollaboratorPermission(t.Context(), f.r, "warm-up"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	f.app.policy.sleep = func(ctx context.Context, d time.Duration) error {
		cancel() // the caller gives up while the request waits
		return sleepContext(ctx, d)
	}
	f.srv.FailNext("GET", "/api/v3/repos/*/*/pulls/3", 5, http.StatusBadGateway, nil)
	_, err := c.PullRequest(ctx, f.r, 3)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want context.Canceled", err)
	}
	if n := len(f.requests("GET", "/pulls/3")); n != 1 {
		t.Errorf("sent %d requests, want 1 (no retry after cancellation)", n)
	}
}
