package ghapp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/google/go-github/v92/github"
)

// CheckRunCreate is the body of POST /repos/{owner}/{repo}/check-runs.
// Zero values are left out. Set ExternalID: it is what lets a create that
// failed ambiguously be found instead of repeated.
type CheckRunCreate struct {
	Name        string
	HeadSHA     string
	Status      string // queued, in_progress, completed
	Conclusion  string // success, failure, neutral, cancelled, skipped, timed_out, action_required
	StartedAt   time.Time
	CompletedAt time.Time
	DetailsURL  string
	ExternalID  string
	Output      *CheckRunOutput
	Actions     []CheckRunAction
}

// CheckRunUpdate is the body of PATCH /repos/{owner}/{repo}/check-runs/{id}.
// Zero values are left unchanged; a non-nil empty Actions removes the
// buttons.
type CheckRunUpdate struct {
	Name        string
	Status      string
	Conclusion  string
	StartedAt   time.Time
	CompletedAt time.Time
	DetailsURL  string
	ExternalID  string
	Output      *CheckRunOutput
	Actions     []CheckRunAction
}

// CheckRunOutput is a check run's output. GitHub appends Annotations to
// those sent before (at most 50 per request) and replaces the rest.
type CheckRunOutput struct {
	Title       string
	Summary     string
	Text        string
	Annotations []Annotation
}

// Annotation marks lines of a file in a check run.
type Annotation struct {
	Path        string
	StartLine   int
	EndLine     int
	StartColumn int // only when StartLine == EndLine; dropped otherwise
	EndColumn   int
	Level       string // notice, warning, failure
	Message     string
	Title       string
	RawDetails  string
}

// CheckRunAction is a requested-action button.
type CheckRunAction struct {
	Label       string // ≤ 20 characters
	Description string // ≤ 40 characters
	Identifier  string // ≤ 20 characters
}

// CheckRun is a check run as listed by GitHub.
type CheckRun struct {
	ID          int64
	Name        string
	HeadSHA     string
	Status      string
	Conclusion  string
	ExternalID  string
	DetailsURL  string
	StartedAt   time.Time
	CompletedAt time.Time
}

// CreateCheckRun creates a check run and returns its id.
//
// A POST that fails with a 5xx or a broken connection may still have
// created the run. So CreateCheckRun does not blindly repeat it: it looks
// for a run on the same commit with the same name and external_id, returns
// that one if found, and only otherwise posts again (up to the attempt
// limit). Without an ExternalID there is nothing to look for, and the
// error is returned rather than risking a duplicate.
func (c *Client) CreateCheckRun(ctx context.Context, repo Repo, cr CheckRunCreate) (int64, error) {
	op := fmt.Sprintf("create check run %q", cr.Name)
	body := cr.body()
	for attempt := 1; ; attempt++ {
		id, err := c.postCheckRun(ctx, repo, body)
		if err == nil {
			return id, nil
		}
		if !ambiguous(ctx, err) || cr.ExternalID == "" || attempt >= c.app.policy.maxAttempts {
			return 0, c.fail(op, repo, err)
		}
		found, ok, lerr := c.findCheckRun(ctx, repo, cr)
		if lerr != nil {
			return 0, c.fail(op, repo, errors.Join(err, fmt.Errorf("looking for a run the failed request may have made: %w", lerr)))
		}
		if ok {
			c.app.log.LogAttrs(ctx, slog.LevelInfo, "github: check run was created despite the error",
				slog.String("repo", repo.String()), slog.String("external_id", cr.ExternalID), slog.Int64("id", found))
			return found, nil
		}
		d := c.app.policy.backoff(attempt)
		c.app.log.LogAttrs(ctx, slog.LevelWarn, "github: retrying check run creation",
			slog.String("repo", repo.String()), slog.String("error", err.Error()),
			slog.Int("attempt", attempt), slog.Duration("wait", d))
		if err := c.app.policy.sleep(ctx, d); err != nil {
			return 0, c.fail(op, repo, err)
		}
	}
}

func (c *Client) postCheckRun(ctx context.Context, repo Repo, body *checkRunBody) (int64, error) {
	gh, err := c.api()
	if err != nil {
		return 0, err
	}
	req, err := gh.NewRequest(ctx, "POST", fmt.Sprintf("repos/%s/%s/check-runs", repo.Owner, repo.Name), body)
	if err != nil {
		return 0, err
	}
	var out github.CheckRun
	if _, err := gh.Do(req, &out); err != nil {
		return 0, err
	}
	return out.GetID(), nil
}

func (c *Client) findCheckRun(ctx context.Context, repo Repo, cr CheckRunCreate) (int64, bool, error) {
	runs, err := c.ListCheckRunsForRef(ctx, repo, cr.HeadSHA, cr.Name)
	if err != nil {
		return 0, false, err
	}
	for _, r := range runs {
		if r.ExternalID == cr.ExternalID {
			return r.ID, true, nil
		}
	}
	return 0, false, nil
}

// ambiguous reports whether a failed request may have taken effect: a
// server error, or a network failure that was not our own cancellation.
// A failure to get a token, a 4xx or a rate limit all mean GitHub did
// nothing.
func ambiguous(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	if s := status(err); s != 0 {
		return s >= http.StatusInternalServerError
	}
	var own *Error
	var netErr *url.Error
	return errors.As(err, &netErr) && !errors.As(err, &own)
}

// UpdateCheckRun changes a check run. Annotations in u.Output are appended
// to the run's; send at most 50 per call.
func (c *Client) UpdateCheckRun(ctx context.Context, repo Repo, id int64, u CheckRunUpdate) error {
	op := fmt.Sprintf("update check run %d", id)
	gh, err := c.api()
	if err != nil {
		return err
	}
	req, err := gh.NewRequest(ctx, "PATCH", fmt.Sprintf("repos/%s/%s/check-runs/%d", repo.Owner, repo.Name, id), u.body())
	if err != nil {
		return c.fail(op, repo, err)
	}
	if _, err := gh.Do(req, nil); err != nil {
		return c.fail(op, repo, err)
	}
	return nil
}

// ListCheckRunsForRef lists the check runs on sha named name (all names
// when empty), newest first, every run rather than only the latest of
// each name.
func (c *Client) ListCheckRunsForRef(ctx context.Context, repo Repo, sha, name string) ([]CheckRun, error) {
	op := "list check runs for " + sha
	gh, err := c.api()
	if err != nil {
		return nil, err
	}
	opts := &github.ListCheckRunsOptions{Filter: github.Ptr("all")}
	if name != "" {
		opts.CheckName = &name
	}
	runs, err := collect(ctx, func(lo github.ListOptions) ([]*github.CheckRun, *github.Response, error) {
		opts.ListOptions = lo
		res, resp, err := gh.Checks.ListCheckRunsForRef(ctx, repo.Owner, repo.Name, sha, opts)
		if err != nil {
			return nil, resp, err
		}
		return res.CheckRuns, resp, nil
	})
	if err != nil {
		return nil, c.fail(op, repo, err)
	}
	out := make([]CheckRun, len(runs))
	for i, r := range runs {
		out[i] = CheckRun{ID: r.GetID(), Name: r.GetName(), HeadSHA: r.GetHeadSHA(), Status: r.GetStatus(),
			Conclusion: r.GetConclusion(), ExternalID: r.GetExternalID(), DetailsURL: r.GetDetailsURL(),
			StartedAt: r.GetStartedAt().Time, CompletedAt: r.GetCompletedAt().Time}
	}
	return out, nil
}
