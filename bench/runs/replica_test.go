package runs

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kilroy-bot/kilroy-bot/ghapp"
	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
	"github.com/kilroy-bot/kilroy-bot/ghserver"
	"github.com/kilroy-bot/kilroy-bot/metrics"
	"github.com/kilroy-bot/kilroy-bot/queue"
	"github.com/kilroy-bot/kilroy-bot/runner"
	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
	"github.com/kilroy-bot/kilroy-bot/runpage"
	"github.com/kilroy-bot/kilroy-bot/server"
)

// replica is one server process: its queue (SQLite in its data dir, or
// the shared Postgres) and its server.Server, wired as serve wires them
// without the sandbox.
type replica struct {
	dataDir string
	q       *queue.Queue
	srv     *server.Server
}

// finished is what the run handlers report: the run's pull request
// (repo#pr), its id, when its handler returned and how long it took, and
// its error.
type finished struct {
	key   string
	runID string
	at    time.Time
	took  time.Duration
	err   error
}

// startReplica opens a queue with opts (its DataDir set here), builds the
// server on app and starts its handlers; every run's end goes to done.
func startReplica(b *testing.B, gh *ghapptest.Server, app *ghapp.App, opts queue.Options, done chan<- finished) *replica {
	b.Helper()
	ctx := context.Background()
	r := &replica{dataDir: b.TempDir()}
	opts.DataDir = r.dataDir
	q, err := queue.Open(ctx, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = q.Close() })
	r.q = q
	r.srv, err = server.NewServer(serverOptions(b, gh, app, r.dataDir, q))
	if err != nil {
		b.Fatal(err)
	}
	h := r.srv.Handlers()
	run := h.Run
	h.Run = func(ctx context.Context, job queue.RunJob) error {
		start := time.Now()
		err := run(ctx, job)
		done <- finished{key: prKey(job.Repo, job.PR), runID: job.RunID, at: time.Now(), took: time.Since(start), err: err}
		return err
	}
	if err := q.StartHandlers(ctx, h); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = q.Stop(ctx)
	})
	return r
}

// serverOptions are a replica's server options, wired as serve wires them
// without the sandbox: its GitHub and check reporters are serve's adapter
// (ghserver), with a redactor built as serve builds it, its own metrics, and
// run links signed as serve signs them. Left out of what serve passes the
// adapter: the banner of a server without a sandbox (a warning at the top
// of each summary, which serve builds from its configuration).
func serverOptions(tb testing.TB, fake *ghapptest.Server, app *ghapp.App, dataDir string, q *queue.Queue) server.ServerOptions {
	tb.Helper()
	host := sandbox.HostEnv()
	host["HOME"] = filepath.Join(dataDir, "node-home")
	m, err := metrics.New(prometheus.NewRegistry(), metrics.Options{QueueDepth: q.Depth, IntakeDepth: q.IntakeDepth})
	if err != nil {
		tb.Fatal(err)
	}
	keys, err := runpage.NewKeys([]byte(webhookSecret))
	if err != nil {
		tb.Fatal(err)
	}
	gh, err := ghserver.New(ghserver.Options{
		App: app, Redactor: ghserver.NewRedactor(dataDir,
			append([]string{webhookSecret, string(fake.PrivateKeyPEM())}, sandbox.HostSecrets(sandbox.HostEnv())...)...), Metrics: m,
		DataDir: dataDir, WebURL: "https://github.com",
		RunURL: func(id string) string { return "https://kilroy.example" + keys.Path(id) },
	})
	if err != nil {
		tb.Fatal(err)
	}
	return server.ServerOptions{
		DataDir: dataDir, Queue: q, Env: runner.EnvInputs{Host: host},
		GitHub:      gh.GitHub,
		NewReporter: gh.NewReporter,
		Tokens: func(_ context.Context, id int64, repo string) (gitops.TokenSource, func(context.Context) error, error) {
			rt := app.RepoTokens(id, repo, nil)
			return gitops.TokenSource(rt.Token), rt.Revoke, nil
		},
	}
}

// webhookSecret stands for serve's webhook secret: the redactor hides it
// and run links are signed with it.
const webhookSecret = "bench-webhook-secret"

func prKey(repo string, pr int) string { return fmt.Sprintf("%s#%d", repo, pr) }

// newApp is the App of the fake GitHub.
func newApp(tb testing.TB, gh *ghapptest.Server) *ghapp.App {
	tb.Helper()
	app, err := ghapp.NewApp(ghapp.Options{AppID: gh.AppID(), PrivateKeyPEM: gh.PrivateKeyPEM(),
		BaseURL: gh.APIURL(), HTTPClient: gh.Client()})
	if err != nil {
		tb.Fatal(err)
	}
	return app
}

// waitInactive polls the queue until none of ids is active (queued,
// running or held by a process), so that every handler has returned and
// its run is done with its directory.
func waitInactive(b *testing.B, q *queue.Queue, ids []string) {
	b.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		active, err := q.Active(context.Background(), ids)
		if err != nil {
			b.Fatal(err)
		}
		if len(active) == 0 {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d runs still active 2m after their handlers returned", len(active))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
