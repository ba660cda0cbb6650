package server

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/ghapp"
	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
	"github.com/kilroy-bot/kilroy-bot/internal/gittest"
	"github.com/kilroy-bot/kilroy-bot/queue"
	"github.com/kilroy-bot/kilroy-bot/runner"
	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
)

// serverWait bounds every wait of the server tests; hitting it fails.
const serverWait = 60 * time.Second

// ghAdapter is the adapter cmd/kilroy-bot writes for real: server's
// GitHub over the App's installation client.
type ghAdapter struct{ c *ghapp.Client }

func ghRepo(r Repo) ghapp.Repo { return ghapp.Repo{Owner: r.Owner, Name: r.Name} }

func (a ghAdapter) PullRequest(ctx context.Context, repo Repo, n int) (PullRequest, error) {
	pr, err := a.c.PullRequest(ctx, ghRepo(repo), n)
	if err != nil {
		return PullRequest{}, err
	}
	return PullRequest{Number: pr.Number, State: pr.State, HeadSHA: pr.HeadSHA, HeadRepoFullName: pr.HeadRepo,
		BaseRef: pr.BaseRef, Draft: pr.Draft, Fork: pr.FromFork(), AuthorLogin: pr.Author}, nil
}

func (a ghAdapter) PullRequestFiles(ctx context.Context, repo Repo, n int) ([]string, error) {
	return a.c.PullRequestFiles(ctx, ghRepo(repo), n)
}

func (a ghAdapter) CollaboratorPermission(ctx context.Context, repo Repo, user string) (string, error) {
	return a.c.CollaboratorPermission(ctx, ghRepo(repo), user)
}

func (a ghAdapter) CreateComment(ctx context.Context, repo Repo, n int, body string) error {
	_, err := a.c.CreateComment(ctx, ghRepo(repo), n, body)
	return err
}

func (a ghAdapter) AddReaction(ctx context.Context, repo Repo, id int64, content string) error {
	return a.c.AddReaction(ctx, ghRepo(repo), id, content)
}

func (a ghAdapter) ConfigCheck(ctx context.Context, repo Repo, c ConfigCheck) error {
	anns := make([]ghapp.Annotation, len(c.Annotations))
	for i, an := range c.Annotations {
		anns[i] = ghapp.Annotation{Path: an.Path, StartLine: an.Line, EndLine: an.Line, Level: "failure", Message: an.Message}
	}
	_, err := a.c.CreateCheckRun(ctx, ghRepo(repo), ghapp.CheckRunCreate{
		Name: ConfigCheckName, HeadSHA: c.HeadSHA, Status: "completed", Conclusion: "failure",
		CompletedAt: time.Now(), ExternalID: "config/" + c.HeadSHA,
		Output: &ghapp.CheckRunOutput{Title: c.Title, Summary: c.Summary, Annotations: anns},
	})
	return err
}

// recReporter records what a run's Reporter was told, in order.
type recReporter struct {
	target ReportTarget
	all    *reporters

	mu    sync.Mutex
	calls []string
}

func (r *recReporter) add(format string, args ...any) error {
	r.mu.Lock()
	r.calls = append(r.calls, fmt.Sprintf(format, args...))
	r.mu.Unlock()
	r.all.changed()
	return nil
}

func (r *recReporter) Calls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

func (r *recReporter) NodeStarted(_ context.Context, ev attractor.NodeStarted) error {
	return r.add("node_started %s", ev.Node.ID)
}

func (r *recReporter) AttemptFinished(_ context.Context, ev attractor.AttemptFinished) error {
	if !ev.Final {
		return nil
	}
	return r.add("node_finished %s %s", ev.Node.ID, ev.Outcome.Status)
}

func (r *recReporter) EdgeSelected(context.Context, attractor.EdgeSelected) error { return nil }

func (r *recReporter) Checkpointed(_ context.Context, ev attractor.Checkpointed) error {
	return r.add("checkpointed %s", ev.Node)
}

func (r *recReporter) RunFinished(_ context.Context, res *attractor.RunResult) error {
	return r.add("run_finished %s", res.Status)
}

func (r *recReporter) Queued(context.Context) error { return r.add("queued") }
func (r *recReporter) Adopt(context.Context) error  { return r.add("adopt") }
func (r *recReporter) ActionRequired(_ context.Context, title, summary string) error {
	return r.add("action_required %s: %s", title, summary)
}
func (r *recReporter) Cancel(_ context.Context, reason string) error {
	return r.add("cancel %s", reason)
}
func (r *recReporter) Fail(_ context.Context, reason string) error { return r.add("fail %s", reason) }
func (r *recReporter) Close(context.Context) error                 { return r.add("close") }
func (r *recReporter) PushFailed(_ context.Context, reason string) error {
	return r.add("push_failed %s", reason)
}

// reporters is the NewReporter of the tests: every Reporter made, by run.
type reporters struct {
	mu     sync.Mutex
	made   []*recReporter
	notify chan struct{}
}

func newReporters() *reporters { return &reporters{notify: make(chan struct{}, 1)} }

func (rs *reporters) New(_ context.Context, t ReportTarget) (Reporter, error) {
	r := &recReporter{target: t, all: rs}
	rs.mu.Lock()
	rs.made = append(rs.made, r)
	rs.mu.Unlock()
	rs.changed()
	return r, nil
}

func (rs *reporters) changed() {
	select {
	case rs.notify <- struct{}{}:
	default:
	}
}

func (rs *reporters) list() []*recReporter {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return slices.Clone(rs.made)
}

// calls joins the calls of every reporter of a run, in creation order.
func (rs *reporters) calls(runID string) []string {
	var out []string
	for _, r := range rs.list() {
		if r.target.RunID == runID {
			out = append(out, r.Calls()...)
		}
	}
	return out
}

// queuedRuns lists the run ids whose checks were created queued, for a
// pipeline, in order.
func (rs *reporters) queuedRuns(pipeline string) []ReportTarget {
	var out []ReportTarget
	for _, r := range rs.list() {
		if r.target.Pipeline == pipeline && slices.Contains(r.Calls(), "queued") {
			out = append(out, r.target)
		}
	}
	return out
}

// waitFor polls cond each time a reporter changes, until the deadline.
func (rs *reporters) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(serverWait)
	for !cond() {
		select {
		case <-rs.notify:
		case <-deadline:
			t.Fatalf("timed out after %s waiting for %s", serverWait, what)
		}
	}
}

// waitEnd waits for the run's checks to be completed one way or another
// and returns the reporter calls.
func (rs *reporters) waitEnd(t *testing.T, runID string) []string {
	t.Helper()
	rs.waitFor(t, "run "+runID+" to end", func() bool {
		for _, c := range rs.calls(runID) {
			if c == "close" || strings.HasPrefix(c, "cancel ") || strings.HasPrefix(c, "fail ") {
				return true
			}
		}
		return false
	})
	return rs.calls(runID)
}

// serverEnv is a Server on a real SQLite queue against the fake GitHub.
type serverEnv struct {
	t       *testing.T
	gh      *ghapptest.Server
	repo    *ghapptest.Repo
	q       *queue.Queue
	srv     *Server
	reps    *reporters
	dataDir string
	nodeEnv runner.EnvInputs
	deliver atomic.Int64
}

func newServerEnv(t *testing.T) *serverEnv {
	t.Helper()
	return newServerEnvWith(t, nil)
}

// newServerEnvWith is newServerEnv with edit applied to the server's
// options before it starts.
func newServerEnvWith(t *testing.T, edit func(*ServerOptions)) *serverEnv {
	t.Helper()
	gittest.Path(t)
	gh := ghapptest.New(t)
	e := &serverEnv{t: t, gh: gh, repo: gh.AddRepo("octo", "widgets"), reps: newReporters(), dataDir: t.TempDir()}
	app, err := ghapp.NewApp(ghapp.Options{AppID: gh.AppID(), PrivateKeyPEM: gh.PrivateKeyPEM(),
		BaseURL: gh.APIURL(), HTTPClient: gh.Client()})
	if err != nil {
		t.Fatal(err)
	}
	q, err := queue.Open(context.Background(), queue.Options{DataDir: e.dataDir, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Close() })
	e.q = q
	e.nodeEnv = testEnv(t)
	opts := ServerOptions{
		DataDir: e.dataDir, Queue: q, GitPath: gittest.Path(t), Env: e.nodeEnv,
		GitHub: func(ctx context.Context, id int64) (GitHub, error) {
			return ghAdapter{app.Installation(ctx, id)}, nil
		},
		NewReporter: e.reps.New,
		Tokens: func(_ context.Context, id int64, repo string) (gitops.TokenSource, func(context.Context) error, error) {
			rt := app.RepoTokens(id, repo, nil)
			revoke := func(ctx context.Context) error {
				defer e.reps.changed() // lets tests wait for revocation
				return rt.Revoke(ctx)
			}
			return gitops.TokenSource(rt.Token), revoke, nil
		},
	}
	if edit != nil {
		edit(&opts)
	}
	e.srv, err = NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.StartHandlers(context.Background(), e.srv.Handlers()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), serverWait)
		defer cancel()
		_ = q.Stop(ctx)
	})
	return e
}

func (e *serverEnv) baseRepo() Repo {
	return Repo{Owner: "octo", Name: "widgets", FullName: "octo/widgets", CloneURL: e.gh.CloneURL("octo", "widgets"),
		DefaultBranch: "main"}
}

// prEvent is a pull_request event for pull request n of the base repository.
func (e *serverEnv) prEvent(action string, p ghapptest.Pull) Event {
	head := p.HeadRepo
	if head == "" {
		head = "octo/widgets"
	}
	return Event{Kind: KindPullRequest, Action: action, InstallationID: e.gh.InstallationID("octo"), Repo: e.baseRepo(),
		PR: PullRequest{Number: p.Number, HeadSHA: p.HeadSHA, HeadRepoFullName: head, BaseRef: "main",
			Draft: p.Draft, Fork: head != "octo/widgets", AuthorLogin: p.Author},
		Sender: Actor{Login: p.Author, Type: "User"}}
}

// commentEvent is a /kilroy comment by sender on pull request n.
func (e *serverEnv) commentEvent(n int, sender string, cmd Command) Event {
	c := e.gh.AddComment("octo", "widgets", ghapptest.Comment{Issue: n, User: sender, Body: "/kilroy " + string(cmd.Verb)})
	return Event{Kind: KindCommentCommand, Action: "created", InstallationID: e.gh.InstallationID("octo"),
		Repo: e.baseRepo(), PR: PullRequest{Number: n}, Sender: Actor{Login: sender, Type: "User"},
		Command: cmd, CommentID: c.ID, CommentedAt: c.Created}
}

// handle decides ev synchronously, as the event worker would.
func (e *serverEnv) handle(ev Event) {
	e.t.Helper()
	payload, err := json.Marshal(ev)
	if err != nil {
		e.t.Fatal(err)
	}
	id := fmt.Sprintf("delivery-%d", e.deliver.Add(1))
	if err := e.srv.HandleEvent(context.Background(), queue.EventJob{
		EventArgs: queue.EventArgs{DeliveryID: id, Event: string(ev.Kind), Payload: payload}}); err != nil {
		e.t.Fatalf("HandleEvent(%s %s): %v", ev.Kind, ev.Action, err)
	}
}

// onlyQueued returns the one run queued for pipeline since before runs.
func (e *serverEnv) newRun(pipeline string, before int) ReportTarget {
	e.t.Helper()
	runs := e.reps.queuedRuns(pipeline)
	if len(runs) != before+1 {
		e.t.Fatalf("queued runs of %s = %d, want %d", pipeline, len(runs), before+1)
	}
	return runs[before]
}

// comments lists the bot's comments on the repository.
func (e *serverEnv) botComments() []string {
	var out []string
	for _, c := range e.gh.Comments("octo", "widgets") {
		if c.ByBot {
			out = append(out, c.Body)
		}
	}
	return out
}

// waitRevoked waits until every repository-scoped (git) token the fake
// issued is revoked, which the last run handler does as it returns.
func (e *serverEnv) waitRevoked() {
	e.t.Helper()
	e.reps.waitFor(e.t, "git tokens to be revoked", func() bool {
		for _, tok := range e.gh.Tokens() {
			if tok.Repositories != nil && !tok.Revoked {
				return false
			}
		}
		return true
	})
}

// assertNoTokenIn fails when any token the fake issued appears in any
// file below dir.
func (e *serverEnv) assertNoTokenIn(dir string) {
	e.t.Helper()
	toks := e.gh.Tokens()
	if len(toks) == 0 {
		e.t.Fatal("the fake issued no tokens")
	}
	err := walkFiles(dir, func(path string, data []byte) {
		for _, tok := range toks {
			if strings.Contains(string(data), tok.Value()) {
				e.t.Errorf("%s holds an installation token", path)
			}
		}
		if strings.Contains(string(data), "ghs_") {
			e.t.Errorf("%s holds a ghs_ token", path)
		}
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

func walkFiles(dir string, f func(path string, data []byte)) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, ent := range entries {
		p := dir + string(os.PathSeparator) + ent.Name()
		if ent.IsDir() {
			if err := walkFiles(p, f); err != nil {
				return err
			}
			continue
		}
		if !ent.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		f(p, data)
	}
	return nil
}
