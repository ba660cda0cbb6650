package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/queue"
	"github.com/kilroy-bot/kilroy-bot/runner"
	"github.com/kilroy-bot/kilroy-bot/runner/agent"
	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
	"github.com/kilroy-bot/kilroy-bot/runner/wtpool"
	"github.com/kilroy-bot/kilroy-bot/runpage"
	appserver "github.com/kilroy-bot/kilroy-bot/server"
	"github.com/kilroy-bot/kilroy-bot/webhook"
)

// productionWiring is the wiring `kilroy-bot serve` runs with: the run
// side is appserver.Server over the queue, the App and the checks publisher.
func productionWiring() appWiring {
	return appWiring{RunSide: buildRunSide}
}

// commitURLTimeout bounds the lookup of a run's repository for the links
// of its page.
const commitURLTimeout = 2 * time.Second

// buildRunSide builds the appserver.Server of serve and what serve needs of
// it: the webhook sink, the workers' start and stop, commit links.
func buildRunSide(ctx context.Context, w wired) (runSide, error) {
	host := sandbox.HostEnv()
	sb, err := newSandbox(ctx, w.Config, host)
	if err != nil {
		return runSide{}, err
	}
	env := runner.EnvInputs{Host: host, SecretNames: botSecretNames, SecretValues: secretValues(w.Config), Sandbox: sb}
	web := webURL(w.Config.GitHubURL)
	gh, err := githubAdapter(w, web)
	if err != nil {
		return runSide{}, err
	}
	// Validated when the policy was decoded; nil places no error.
	caps, err := w.Config.Policy.Limits.caps(nil)
	if err != nil {
		return runSide{}, err
	}
	budgets := w.Config.Policy.Agents.Budgets
	caps.MaxRunCostUSD, caps.MaxRunTokens = budgets.PerRunUSD, budgets.PerRunTokens
	pool, err := newWorktreePool(w.Config.DataDir, host, sb != nil)
	if err != nil {
		return runSide{}, err
	}
	scope, err := w.Config.Policy.Sandbox.Caches.scope()
	if err != nil {
		return runSide{}, err
	}
	images, store, err := w.Config.Policy.Images.options(w.Config.DataDir)
	if err != nil {
		return runSide{}, err
	}
	srv, err := appserver.NewServer(appserver.ServerOptions{
		DataDir:     w.Config.DataDir,
		Queue:       w.Queue,
		GitHub:      gh.GitHub,
		NewReporter: gh.NewReporter,
		Tokens: func(_ context.Context, id int64, repo string) (gitops.TokenSource, func(context.Context) error, error) {
			// Minted lazily, right before each fetch and push; revoked
			// when the run or event ends.
			rt := w.App.RepoTokens(id, repo, nil)
			return gitops.TokenSource(rt.Token), rt.Revoke, nil
		},
		Env:        env,
		NewAgent:   newAgentFactory(w, env),
		Caps:       caps,
		Daily:      dailyBudget(budgets.PerInstallationDailyUSD, w.Queue),
		Logger:     w.Logger,
		Pool:       pool,
		CacheScope: scope,
		Disk:       w.Config.Policy.Sandbox.Disk.reserve(),
		Images:     images,
	})
	if err != nil {
		return runSide{}, err
	}
	sweep, err := retentionLoop(w.Config, srv, w.App)
	if err != nil {
		return runSide{}, err
	}
	if sweepImages, err := imageSweep(w.Config, store, w.Logger); err != nil {
		return runSide{}, err
	} else if sweepImages != nil {
		runs := sweep
		sweep = func(ctx context.Context) {
			go sweepImages(ctx)
			runs(ctx)
		}
	}
	q := w.Queue
	return runSide{
		Background: sweep,
		Sink:       queueSink{srv: srv},
		Start: func(ctx context.Context) (func(context.Context) error, error) {
			// ctx ends when shutdown begins, and cancelling the queue's
			// context is a hard stop that fails the running runs; the
			// shutdown hook stops it gracefully instead.
			if err := q.StartHandlers(context.WithoutCancel(ctx), srv.Handlers()); err != nil {
				return nil, err
			}
			stop := stopQueue(q, w.Config.RunDrain)
			return func(ctx context.Context) error {
				err := stop(ctx)
				sb.Close() // no node runs any more: end the prewarmed jails
				return err
			}, nil
		},
		Source: func(runID string) runpage.Source {
			ctx, cancel := context.WithTimeout(context.Background(), commitURLTimeout)
			defer cancel()
			run, err := q.RunByID(ctx, runID)
			if err != nil || run.Repo == "" {
				return runpage.Source{}
			}
			return runSource(web, run)
		},
		CommitURL: func(runID, sha string) string {
			ctx, cancel := context.WithTimeout(context.Background(), commitURLTimeout)
			defer cancel()
			run, err := q.RunByID(ctx, runID)
			if err != nil || run.Repo == "" {
				return ""
			}
			return web + "/" + run.Repo + "/commit/" + url.PathEscape(sha)
		},
	}, nil
}

// newWorktreePool is the pool of warm worktrees of pull request runs, in
// <data-dir>/pool with wtpool's default bounds (2 per repository, 16 in
// all, an hour idle); its git runs with the data dir's HOME, as the event
// handlers' does. Without the sandbox there is none (nil): a node could
// then write the worktree's index and the mirror, which the pool's
// cleaning trusts, so every run checks out a fresh worktree.
func newWorktreePool(dataDir string, host map[string]string, sandboxed bool) (*wtpool.Pool, error) {
	if !sandboxed {
		return nil, nil
	}
	git, err := gitops.New(gitops.Options{PATH: host["PATH"], HomeDir: filepath.Join(dataDir, "home")})
	if err != nil {
		return nil, err
	}
	return wtpool.New(wtpool.Options{Dir: filepath.Join(dataDir, "pool"), Git: git})
}

// runSource is what a run tested, linked on GitHub's web root web ("" for
// no links).
func runSource(web string, run queue.Run) runpage.Source {
	src := runpage.Source{Repo: run.Repo, PR: run.PR, HeadSHA: run.HeadSHA}
	if web == "" {
		return src
	}
	src.RepoURL = web + "/" + run.Repo
	if run.PR > 0 {
		src.PRURL = src.RepoURL + "/pull/" + strconv.Itoa(run.PR)
	}
	if run.HeadSHA != "" {
		src.HeadURL = src.RepoURL + "/commit/" + url.PathEscape(run.HeadSHA)
	}
	return src
}

// stopQueue is the shutdown hook: the queue stops taking jobs and lets the
// running ones finish for drain (the whole of the hook's time when zero);
// runs still going then are handed back, their checks left for the run's
// resumption at the next start to complete.
func stopQueue(q *queue.Queue, drain time.Duration) func(context.Context) error {
	return func(ctx context.Context) error {
		if drain > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, drain)
			defer cancel()
		}
		return q.Stop(ctx)
	}
}

// secretValues are the bot's own secrets by value: no node environment
// may carry them.
func secretValues(cfg serveConfig) []string {
	var out []string
	for _, s := range []secret{cfg.WebhookSecret, cfg.PrivateKey, cfg.DatabaseURL} {
		if len(s) > 0 {
			out = append(out, string(s))
		}
	}
	return out
}

// newAgentFactory builds each run's coding agent from the server policy's
// backends, with the run's artifact-policy environment.
func newAgentFactory(w wired, env runner.EnvInputs) runner.AgentFactory {
	rtCache, rtErr := agentRuntimeCache(w.Config.DataDir)
	return func(policyEnv map[string]string, managedRoots, caches string, sb *sandbox.Sandbox) (attractor.Agent, error) {
		if rtErr != nil {
			return nil, rtErr
		}
		a, err := agent.New(w.Config.Policy.Agents, agent.Deps{
			HostEnv: env.Host, Policy: policyEnv, SecretNames: env.SecretNames, SecretValues: env.SecretValues,
			Logger: w.Logger, Sandbox: sb, ManagedRoots: managedRoots, Caches: caches, Where: agent.ServePolicy,
			RuntimeCache: rtCache,
		})
		if err != nil {
			return nil, err
		}
		return a, nil
	}
}

// webURL is the web root of the GitHub whose API root is api, for links
// to commits: github.com for api.github.com, https://HOST for GitHub
// Enterprise's https://HOST/api/v3/.
func webURL(api string) string {
	u, err := url.Parse(api)
	if err != nil {
		return ""
	}
	if u.Host == "api.github.com" {
		return "https://github.com"
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/api/v3")
	return strings.TrimSuffix(u.String(), "/")
}

// queueSink is the webhook's Sink: it hands a delivery's event to the
// server, which records the delivery and enqueues the event job in one
// transaction.
type queueSink struct{ srv *appserver.Server }

func (s queueSink) Accept(ctx context.Context, d webhook.Delivery, ev appserver.Event) (webhook.Accepted, error) {
	res, err := s.srv.Accept(ctx, d.ID, d.Event, ev)
	switch {
	case errors.Is(err, queue.ErrUnavailable):
		return webhook.Accepted{}, fmt.Errorf("%w: %w", webhook.ErrUnavailable, err)
	case err != nil:
		return webhook.Accepted{}, err
	case res.Duplicate:
		return webhook.Accepted{Duplicate: true}, nil
	}
	return webhook.Accepted{}, nil
}

// dailyBudget is the daily agent budget of each installation, kept in the
// queue's database (none without one).
func dailyBudget(usd float64, q *queue.Queue) appserver.DailyBudget {
	if q == nil {
		return appserver.DailyBudget{}
	}
	return appserver.DailyBudget{MaxUSD: usd, Store: q}
}
