// Package ghserver is what the server (package server) needs of GitHub,
// over the App's installation clients (ghapp): server.GitHub for one
// installation, and each run's check reporter, a checks.Publisher with
// the metrics listener and the run page's report.md beside it.
//
// `kilroy-bot serve` wires it, and the benchmarks under bench/ drive the
// run path through it, so that what they measure is what serve runs.
// Everything it posts, comments and checks alike, passes through the
// redactor it is given; comments are cut to GitHub's limit, checks by the
// Publisher.
package ghserver

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/kilroy-bot/kilroy-bot/checks"
	"github.com/kilroy-bot/kilroy-bot/ghapp"
	"github.com/kilroy-bot/kilroy-bot/metrics"
	"github.com/kilroy-bot/kilroy-bot/server"
)

// maxCommentBody is GitHub's limit on an issue comment's body.
const maxCommentBody = 65536

// Options are what the adapter takes from the server it is wired into.
// App, Redactor and Metrics are required.
type Options struct {
	App *ghapp.App
	// Redactor redacts every comment and check posted (NewRedactor).
	Redactor *checks.Redactor
	// Metrics hears every run's events and agent usage.
	Metrics *metrics.Metrics
	// Logger gets what goes wrong beside the checks (nil: discarded).
	Logger *slog.Logger
	// DataDir is the server's data dir: a run's report.md is written to
	// its run directory, runs/<run-id>, when that exists.
	DataDir string
	// WebURL is GitHub's web root, for links to commits; "" for none.
	WebURL string
	// RunURL is the link to a run's page, with its token: the details_url
	// of its checks. nil (or "") for none.
	RunURL func(runID string) string
	// MaxAnnotations and Banner are the checks' RenderOptions: the
	// annotation cap (0: checks.MaxAnnotations) and the first line of
	// every summary.
	MaxAnnotations int
	Banner         string
	// Throttle is the least time between two in-progress updates of a
	// check (0: checks.DefaultThrottle).
	Throttle time.Duration
}

// Adapter makes the GitHub of each installation and the reporter of each
// run: server.ServerOptions.GitHub and NewReporter.
type Adapter struct {
	o Options
	// locks make a run's Queued and Adopt take turns in this process: the
	// event handler creates the checks of a run it enqueued while a worker
	// may already be starting the run, and either must see what the other
	// created (a create GitHub answers late, after retries, is invisible
	// until then).
	locks runLocks
}

// New returns the adapter over o.
func New(o Options) (*Adapter, error) {
	switch {
	case o.App == nil:
		return nil, errors.New("ghserver: no App")
	case o.Redactor == nil:
		return nil, errors.New("ghserver: no redactor: nothing may be posted unredacted")
	case o.Metrics == nil:
		return nil, errors.New("ghserver: no metrics")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Adapter{o: o}, nil
}

// GitHub is server.ServerOptions.GitHub: the GitHub of installation id.
func (a *Adapter) GitHub(ctx context.Context, id int64) (server.GitHub, error) {
	return &GitHub{c: a.o.App.Installation(ctx, id), a: a}, nil
}

// GitHub is server.GitHub over one installation's client. Everything it
// posts passes through the adapter's redactor.
type GitHub struct {
	c *ghapp.Client
	a *Adapter
}

var (
	_ server.GitHub      = (*GitHub)(nil)
	_ server.CheckLister = (*GitHub)(nil)
)

func ghRepo(r server.Repo) ghapp.Repo { return ghapp.Repo{Owner: r.Owner, Name: r.Name} }

func (g *GitHub) PullRequest(ctx context.Context, repo server.Repo, n int) (server.PullRequest, error) {
	pr, err := g.c.PullRequest(ctx, ghRepo(repo), n)
	if err != nil {
		return server.PullRequest{}, err
	}
	return server.PullRequest{Number: pr.Number, State: pr.State, HeadSHA: pr.HeadSHA, HeadRepoFullName: pr.HeadRepo,
		BaseRef: pr.BaseRef, Draft: pr.Draft, Fork: pr.FromFork(), AuthorLogin: pr.Author}, nil
}

func (g *GitHub) PullRequestFiles(ctx context.Context, repo server.Repo, n int) ([]string, error) {
	return g.c.PullRequestFiles(ctx, ghRepo(repo), n)
}

func (g *GitHub) CollaboratorPermission(ctx context.Context, repo server.Repo, user string) (string, error) {
	return g.c.CollaboratorPermission(ctx, ghRepo(repo), user)
}

func (g *GitHub) CreateComment(ctx context.Context, repo server.Repo, n int, body string) error {
	_, err := g.c.CreateComment(ctx, ghRepo(repo), n, checks.Truncate(g.a.o.Redactor.Redact(body), maxCommentBody, ""))
	return err
}

func (g *GitHub) AddReaction(ctx context.Context, repo server.Repo, id int64, content string) error {
	return g.c.AddReaction(ctx, ghRepo(repo), id, content)
}

// CheckRuns lists the check runs on sha, the newest of each name, for
// `/kilroy run --from-failure` to find the failed runs.
func (g *GitHub) CheckRuns(ctx context.Context, repo server.Repo, sha string) ([]server.CheckRunState, error) {
	runs, err := g.c.ListCheckRunsForRef(ctx, ghRepo(repo), sha, "")
	if err != nil {
		return nil, err
	}
	out := make([]server.CheckRunState, len(runs))
	for i, r := range runs {
		out[i] = server.CheckRunState{Name: r.Name, ExternalID: r.ExternalID, Status: r.Status, Conclusion: r.Conclusion}
	}
	return out, nil
}

// ConfigCheck publishes the failed kilroy/config check through a
// Publisher, which redacts, fits GitHub's limits and sends annotations
// past the first 50 in further requests.
func (g *GitHub) ConfigCheck(ctx context.Context, repo server.Repo, c server.ConfigCheck) error {
	anns := make([]checks.Annotation, len(c.Annotations))
	for i, an := range c.Annotations {
		anns[i] = checks.Annotation{Path: an.Path, StartLine: an.Line, EndLine: an.Line,
			Level: checks.LevelFailure, Message: an.Message, Title: "invalid " + an.Path}
		if an.Column > 0 {
			anns[i].StartColumn, anns[i].EndColumn = an.Column, an.Column
		}
	}
	name := strings.TrimPrefix(server.ConfigCheckName, "kilroy/")
	opts := g.a.options(repo.FullName)
	opts.DetailsURL = nil // no run page: nothing ran
	pub := checks.NewPublisher(g.c, ghRepo(repo), nil,
		checks.RunInfo{Pipeline: name, RunID: name + "-" + c.HeadSHA, HeadSHA: c.HeadSHA}, opts)
	return errors.Join(pub.Invalid(ctx, c.Title, c.Summary, anns), pub.Close(ctx))
}

// options are the Publisher's options for the checks of repo (owner/name).
func (a *Adapter) options(repo string) checks.PublishOptions {
	return checks.PublishOptions{
		DetailsURL: a.o.RunURL, // the run page link with its token
		Render: checks.RenderOptions{
			CommitURL: func(sha string) string {
				if a.o.WebURL == "" {
					return ""
				}
				return a.o.WebURL + "/" + repo + "/commit/" + sha
			},
			OutputTail:     liveOutputTail,
			Redactor:       a.o.Redactor,
			MaxAnnotations: a.o.MaxAnnotations,
			Banner:         a.o.Banner,
		},
		Throttle: a.o.Throttle,
		Logger:   a.o.Logger,
	}
}
