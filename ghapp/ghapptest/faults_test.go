package ghapptest_test

import (
	"errors"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-github/v92/github"
)

func TestFailNextServerErrors(t *testing.T) {
	s, _, _, tok := setup(t)
	s.FailNext("GET", "/api/v3/repos/*/widgets", 2, 502, nil)
	c := client(t, s, tok)
	var got []int
	for range 3 {
		_, resp, _ := c.Repositories.Get(t.Context(), "acme", "widgets")
		got = append(got, resp.StatusCode)
	}
	if diff := cmp.Diff(got, []int{502, 502, 200}); diff != "" {
		t.Errorf("statuses (-got +want):\n%s", diff)
	}
	// Other methods and paths are untouched.
	s.FailNext("POST", "/api/v3/repos/*/widgets", 1, 500, nil)
	if _, _, err := c.Repositories.Get(t.Context(), "acme", "widgets"); err != nil {
		t.Errorf("GET with only a POST fault pending: %v", err)
	}
}

func TestFailNextSecondaryRateLimit(t *testing.T) {
	s, _, sha, tok := setup(t)
	s.FailNext("POST", "/api/v3/repos/acme/widgets/check-runs", 1, 403, map[string]string{"Retry-After": "1"})
	opts := github.CreateCheckRunOptions{Name: "kilroy/ci", HeadSHA: sha}
	_, _, err := client(t, s, tok).Checks.CreateCheckRun(t.Context(), "acme", "widgets", opts)
	var abuse *github.AbuseRateLimitError
	if !errors.As(err, &abuse) || abuse.GetRetryAfter() != time.Second {
		t.Fatalf("err %v, want a secondary rate limit with Retry-After 1s", err)
	}
	// go-github holds back the client that was limited; a fresh one shows
	// the fault is spent.
	if _, _, err := client(t, s, tok).Checks.CreateCheckRun(t.Context(), "acme", "widgets", opts); err != nil {
		t.Errorf("after the fault: %v", err)
	}
	if n := len(s.CheckRuns("acme", "widgets")); n != 1 {
		t.Errorf("%d check runs, want 1: the limited request must not count", n)
	}
}

func TestFailNextPrimaryRateLimit(t *testing.T) {
	s, _, _, tok := setup(t)
	reset := time.Now().Add(time.Minute).Unix()
	s.FailNext("", "/api/v3/repos/*/*", 1, 403, map[string]string{
		"X-RateLimit-Remaining": "0", "X-RateLimit-Limit": "5000", "X-RateLimit-Reset": strconv.FormatInt(reset, 10),
	})
	_, _, err := client(t, s, tok).Repositories.Get(t.Context(), "acme", "widgets")
	var limit *github.RateLimitError
	if !errors.As(err, &limit) || limit.Rate.Reset.Unix() != reset {
		t.Errorf("err %v, want a primary rate limit resetting at %d", err, reset)
	}
}

func TestFailNextGit(t *testing.T) {
	s, _, _, tok := setup(t)
	s.FailNext("GET", "/acme/widgets.git/info/refs", 1, 502, nil)
	dir := filepath.Join(t.TempDir(), "c")
	if out, err := git(t, "", tok, "clone", "-q", s.CloneURL("acme", "widgets"), dir); err == nil {
		t.Fatalf("clone during a 502 succeeded:\n%s", out)
	}
	mustGit(t, "", tok, "clone", "-q", s.CloneURL("acme", "widgets"), dir)
}
