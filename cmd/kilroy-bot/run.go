package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mattn/go-isatty"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/checks"
	"github.com/kilroy-bot/kilroy-bot/ghserver"
	"github.com/kilroy-bot/kilroy-bot/runner"
	"github.com/kilroy-bot/kilroy-bot/runner/agent"
	"github.com/kilroy-bot/kilroy-bot/runner/image"
	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
	appserver "github.com/kilroy-bot/kilroy-bot/server"
)

// localFlags are the flags `run` and `resume` share.
type localFlags struct {
	dataDir string
	answers answerFlag
	yes     bool
	gitPath string
	agents  string
	// noSandbox runs nodes unjailed even where bubblewrap works.
	noSandbox bool
	format    formatFlag
}

func (f *localFlags) register(fs *flag.FlagSet) {
	// localFlagsUsage describes these flags.
	fs.StringVar(&f.dataDir, "data-dir", defaultDataDir(), "")
	fs.Var(&f.answers, "answer", "")
	fs.BoolVar(&f.yes, "yes", false, "")
	fs.StringVar(&f.gitPath, "git", "git", "")
	fs.BoolVar(&f.noSandbox, "no-sandbox", false, "")
	fs.StringVar(&f.agents, "agents", "", "")
	fs.Var(&f.format, "format", "")
}

const localFlagsUsage = `  --answer NODE=LABEL  answer the human gate NODE with the choice LABEL (its
                       label or accelerator key); repeatable
  --yes                answer every other human gate with its first choice
  --agents FILE        YAML file whose agents: key configures the coding agents
                       of box nodes (the server policy file's shape); without
                       it box nodes fail. Its sandbox.network (public, none,
                       host) and sandbox.network_allow apply to the run too
  --data-dir DIR       where run directories go (default $KILROY_DATA_DIR, else
                       kilroy-bot in the user cache directory)
  --git PATH           the git binary (default git)
  --no-sandbox         run nodes without the sandbox (bubblewrap), with your
                       own rights
  --format text|markdown
                       what stdout gets at the end: a short summary (in
                       colour on a terminal unless NO_COLOR is set) or the
                       Markdown report; default text on a terminal, else
                       markdown. RUN_DIR/report.md is Markdown either way
`

const runUsage = `usage: kilroy-bot run [--repo DIR] [--graph NAME|PATH] [--run-dir DIR] [flags]

Runs a pipeline on the repository's HEAD commit in a fresh worktree, with a
checkpoint commit per node on a local run branch kilroy/run/PIPELINE/RUN_ID.
Pipelines and .kilroy/config.yml are read from HEAD: commit your edits
first. Progress goes to stderr; the report (what the GitHub check would
show) to RUN_DIR/report.md, and to stdout as a short summary on a terminal
or as that Markdown otherwise (--format).

  --repo DIR           the repository (any directory inside it; default .)
  --graph NAME|PATH    a pipeline name (ci) or the path of a .dot file in the
                       repository (.kilroy/ci.dot); default ci, else the only one
  --run-dir DIR        the run directory (default DATA_DIR/runs/RUN_ID)
  --image REF          the image every node runs in, over the repository's
                       image: (golang:1.23, REGISTRY/NAME:TAG, NAME@sha256:...,
                       oci:DIR, oci-archive:FILE, docker-archive:FILE), or
                       host for your own toolchain; default: the
                       repository's image:, else host
` + localFlagsUsage + `
Exit status: 0 the pipeline succeeded (or ended partial_success: a failure
the pipeline tolerated, shown in the report), 1 it failed or could not start,
2 usage or configuration error (nothing ran).
`

const resumeUsage = `usage: kilroy-bot resume [flags] RUN_DIR

Continues an interrupted run (also one killed with SIGKILL) from the last
checkpoint in RUN_DIR, with the pipeline, artifact policy and limits it
started with.

` + localFlagsUsage + `
Exit status: 0 the pipeline succeeded (or ended partial_success: a failure
the pipeline tolerated, shown in the report), 1 it failed or could not start,
2 usage error.
`

// runLocal implements `kilroy-bot run`.
func runLocal(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var lf localFlags
	lf.register(fs)
	repo := fs.String("repo", ".", "")
	graph := fs.String("graph", "", "")
	runDir := fs.String("run-dir", "", "")
	img := fs.String("image", "", "")
	if code, ok := parseFlags(fs, args, "run", runUsage, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "kilroy-bot run: unexpected argument %q: pass the pipeline with --graph\n\n%s", fs.Arg(0), runUsage)
		return 2
	}
	o, err := lf.options(stderr)
	defer o.Env.Sandbox.CloseAtExit() // its prewarmed jails, its pasta
	if err != nil {
		fmt.Fprintf(stderr, "kilroy-bot: %v\n", err)
		return 2
	}
	o.RepoDir, o.Graph, o.RunDir = *repo, *graph, *runDir
	o.Images.Override = *img
	prep, err := runner.PrepareLocal(ctx, o)
	if err != nil {
		return reportSetupError(stderr, err)
	}
	// A pipeline with warnings still runs; say what validate would.
	for _, d := range prep.Warnings {
		fmt.Fprintln(stderr, d.String())
	}
	if len(prep.Unseen) > 0 {
		fmt.Fprintln(stderr, unseenLine(prep.Unseen))
	}
	return execute(ctx, stdout, stderr, prep, o, lf.format, nil)
}

// resumeLocal implements `kilroy-bot resume RUN_DIR`.
func resumeLocal(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("resume", flag.ContinueOnError)
	var lf localFlags
	lf.register(fs)
	if code, ok := parseFlags(fs, args, "resume", resumeUsage, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(stderr, "kilroy-bot resume: want one RUN_DIR, got %d arguments\n\n%s", fs.NArg(), resumeUsage)
		return 2
	}
	o, err := lf.options(stderr)
	defer o.Env.Sandbox.CloseAtExit() // its prewarmed jails, its pasta
	if err != nil {
		fmt.Fprintf(stderr, "kilroy-bot: %v\n", err)
		return 2
	}
	prep, err := runner.PrepareResume(ctx, fs.Arg(0), o)
	if err != nil {
		return reportSetupError(stderr, err)
	}
	// Read before executing, which appends to the run's progress. Without
	// it the run goes on; the report just shows less of the earlier nodes.
	h, err := runner.ReadHistory(string(prep.Dir))
	if err != nil {
		fmt.Fprintf(stderr, "kilroy-bot: the report will not show what the run did before it was interrupted: %v\n", err)
	}
	return execute(ctx, stdout, stderr, prep, o, lf.format, h)
}

func (f *localFlags) options(stderr io.Writer) (runner.LocalOptions, error) {
	host := sandbox.HostEnv()
	if v := host["KILROY_DATA_DIR"]; v != "" && f.dataDir == defaultDataDir() {
		f.dataDir = v
	}
	o := runner.LocalOptions{
		DataDir: f.dataDir, GitPath: f.gitPath, Live: stderr,
		Env:         runner.EnvInputs{Host: host, SecretNames: botSecretNames},
		Interviewer: f.interviewer(stderr), Answers: f.answers.m,
	}
	if err := closeDataDir(f.dataDir, nil); err != nil {
		return o, err
	}
	var p serverPolicy
	if f.agents != "" {
		var err error
		if p, err = loadLocalPolicy(f.agents); err != nil {
			return o, err
		}
	}
	sb, err := f.sandbox(host, p.Sandbox, stderr)
	if err != nil {
		return o, err
	}
	o.Env.Sandbox = sb
	store, err := image.Open(filepath.Join(f.dataDir, "images"), image.Options{})
	if err != nil {
		return o, err
	}
	o.Images.Store = store
	if f.agents == "" {
		o.Agent = agent.Missing{Where: agent.MissingLocal}
		return o, nil
	}
	if sb != nil {
		allow, _ := sandbox.ParseCIDRs(p.Sandbox.NetworkAllow) // checked by loadLocalPolicy
		for _, w := range agentEndpointWarnings(p.Agents, sb.Network(), allow, f.agents) {
			fmt.Fprintf(stderr, "kilroy-bot: warning: %s\n", w)
		}
	}
	cfg := p.Agents
	where := f.agents + ", the file --agents names"
	caps := appserver.Caps{MaxRunCostUSD: cfg.Budgets.PerRunUSD, MaxRunTokens: cfg.Budgets.PerRunTokens, BudgetFile: f.agents}
	o.CapBudgets = caps.ClampBudgets
	rtCache, err := agentRuntimeCache(f.dataDir)
	if err != nil {
		return o, err
	}
	o.NewAgent = func(policyEnv map[string]string, managedRoots, caches string, sb *sandbox.Sandbox) (attractor.Agent, error) {
		// The user's own machine: a CLI installed with its runtime
		// (scripts/install-agent-clis.sh) serves images that lack it.
		return agent.New(cfg, agent.Deps{HostEnv: host, Policy: policyEnv, SecretNames: botSecretNames,
			Sandbox: sb, ManagedRoots: managedRoots, Caches: caches, Where: where,
			RuntimeCache: rtCache, DetectRuntime: true})
	}
	return o, nil
}

// sandbox jails local nodes when bubblewrap works here and says in one
// line when it cannot (a local run goes on without it). The network is
// the --agents file's sandbox.network and network_allow; unset, public
// where it works and else the machine's own, with a warning.
func (f *localFlags) sandbox(host map[string]string, p sandboxPolicy, stderr io.Writer) (*sandbox.Sandbox, error) {
	if f.noSandbox {
		fmt.Fprintln(stderr, "kilroy-bot: --no-sandbox: nodes run with your own rights")
		return nil, nil
	}
	dataDir, err := filepath.Abs(f.dataDir)
	if err != nil {
		dataDir = f.dataDir
	}
	// One run per process (run, resume): one network namespace, the
	// self-test's, for the run.
	cfg := sandbox.Config{PATH: host["PATH"], StateDir: filepath.Join(dataDir, "sandbox"), Hidden: []string{dataDir}, OneRun: true}
	if cfg.Network, err = sandbox.ParseNetwork(string(p.Network)); err != nil {
		return nil, fmt.Errorf("%s: sandbox.network: %w", f.agents, err)
	}
	if cfg.NetworkAllow, err = sandbox.ParseCIDRs(p.NetworkAllow); err != nil {
		return nil, fmt.Errorf("%s: sandbox.network_allow: %w", f.agents, err)
	}
	s, err := newLocalSandbox(cfg)
	if errors.Is(err, sandbox.ErrNetwork) && p.Network != "" {
		return nil, fmt.Errorf("%w\n%s sets sandbox.network: %s, which needs pasta (Debian's passt, scripts/install-sandbox.sh) "+
			"and, as a user other than root, a /dev/net/tun you may open; or set sandbox.network: host there", err, f.agents, p.Network)
	}
	if errors.Is(err, sandbox.ErrNetwork) {
		// A local run is the user's own machine and code: without pasta (or
		// as a user who may not make the run's namespace) its nodes keep
		// the machine's network, as they did before network public.
		fmt.Fprintf(stderr, "kilroy-bot: nodes share this machine's network (its loopback services too): %v\n", err)
		cfg.Network, cfg.NetworkAllow = sandbox.NetworkHost, nil
		s, err = newLocalSandbox(cfg)
	}
	if err != nil {
		fmt.Fprintf(stderr, "kilroy-bot: nodes run without a sandbox: %v\n", err)
		return nil, nil
	}
	return s, nil
}

// newLocalSandbox makes the sandbox of a local run and self-tests it.
func newLocalSandbox(cfg sandbox.Config) (*sandbox.Sandbox, error) {
	s, err := sandbox.New(cfg)
	if err == nil {
		if err = s.SelfTest(context.Background()); err != nil {
			s.Close()
		}
	}
	return s, err
}

// loadLocalPolicy reads the --agents file of a local run, shaped like
// the server policy and decoded just as strictly: a run uses its
// `agents:` and its sandbox.network and sandbox.network_allow.
func loadLocalPolicy(path string) (serverPolicy, error) {
	var p serverPolicy
	data, err := os.ReadFile(path)
	if err != nil {
		return p, fmt.Errorf("--agents: %w", err)
	}
	if err := decodePolicy(path, data, &p); err != nil {
		return p, fmt.Errorf("--agents: %w", err)
	}
	return p, nil
}

// botSecretNames are the server's own settings that carry secrets; a local
// run strips them too, in case the shell that runs it has them set.
var botSecretNames = []string{"KILROY_WEBHOOK_SECRET", "KILROY_WEBHOOK_SECRET_FILE", "KILROY_PRIVATE_KEY_FILE", "KILROY_DATABASE_URL"}

func (f *localFlags) interviewer(stderr io.Writer) attractor.Interviewer {
	var fallback attractor.Interviewer = noHuman{}
	if f.yes {
		fallback = attractor.AutoFirst{}
	} else if isTerminal(os.Stdin) {
		fallback = attractor.NewConsole(os.Stdin, stderr)
	}
	return fallback
}

// execute runs a prepared run with the report recorder listening, then
// writes report.md and prints the report or its summary (format). history
// is what a resumed run did before it was interrupted; nil for a new run.
func execute(ctx context.Context, stdout, stderr io.Writer, prep *runner.Prepared, o runner.LocalOptions, format formatFlag, history *runner.History) int {
	info := checks.RunInfo{Pipeline: prep.Name, RunID: prep.RunID, HeadSHA: prep.BaseSHA}
	if im := prep.Image(); im != nil {
		info.Image, info.ImageDigest = im.Ref, im.Pinned.Digest
	}
	rec := checks.NewRecorder(prep.Pipeline, info)
	if history != nil {
		rec.Seed(ghserver.Prior(history))
	}
	o.Listener = rec
	res, err := prep.Execute(ctx, o)
	// progress.ndjson's last line, once the report is written (the run
	// branch is local: its checkpoints are all there is to update).
	defer finishProgress(stderr, prep, res, err)
	if err != nil {
		fmt.Fprintf(stderr, "kilroy-bot: %v\n", err)
		return 1
	}
	report := checks.LocalReport(rec.View(), checks.RenderOptions{
		OutputTail: ghserver.OutputTail,
	})
	if werr := os.WriteFile(prep.Dir.Report(), []byte(report), 0o644); werr != nil {
		fmt.Fprintf(stderr, "kilroy-bot: write report.md: %v\n", werr)
	}
	printSummary(stdout, stderr, format, rec.View(), report, prep)
	return exitCode(res.Status)
}

// exitCode is 0 for a run that succeeded or ended partial_success (the
// pipeline tolerated a failure: allow_partial, first_success; the report
// says which), 1 for a failed or cancelled run.
func exitCode(s attractor.Status) int {
	if s == attractor.StatusSuccess || s == attractor.StatusPartialSuccess {
		return 0
	}
	return 1
}

func finishProgress(stderr io.Writer, prep *runner.Prepared, res *attractor.RunResult, err error) {
	if ferr := prep.Finish(runner.EndOf(res, err)); ferr != nil {
		fmt.Fprintf(stderr, "kilroy-bot: %v\n", ferr)
	}
}

func reportSetupError(stderr io.Writer, err error) int {
	var inv *runner.InvalidPipelineError
	if errors.As(err, &inv) {
		for _, d := range inv.Diagnostics {
			fmt.Fprintln(stderr, d.String())
		}
	}
	fmt.Fprintf(stderr, "kilroy-bot: %v\n", err)
	if errors.Is(err, runner.ErrUsage) {
		return 2
	}
	return 1
}

func defaultDataDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "kilroy-bot")
	}
	return "kilroy-data"
}

// answerFlag collects --answer NODE=LABEL.
type answerFlag struct{ m map[string]string }

func (a *answerFlag) String() string { return "" }

func (a *answerFlag) Set(s string) error {
	node, label, ok := strings.Cut(s, "=")
	if !ok || node == "" || label == "" {
		return fmt.Errorf("want NODE=LABEL, got %q", s)
	}
	if a.m == nil {
		a.m = map[string]string{}
	}
	a.m[node] = label
	return nil
}

// noHuman refuses wait.human nodes in unattended runs, saying how to
// answer them.
type noHuman struct{}

func (noHuman) Ask(_ context.Context, q attractor.Question) (attractor.Answer, error) {
	return attractor.Answer{}, fmt.Errorf("node %s waits for a human and no terminal is attached: pass --answer %s=LABEL or --yes", q.Node, q.Node)
}

// isTerminal asks the terminal driver, not the file mode: /dev/null, the
// stdin of an unattended run (cron, CI, `< /dev/null`), is a character
// device too, and taking it for a terminal would skip every gate on EOF
// instead of saying how to answer it.
func isTerminal(f *os.File) bool {
	return isatty.IsTerminal(f.Fd())
}

// unseenLine says in one line that edits under .kilroy/ are not in the
// commit the run reads, naming at most three of the files.
func unseenLine(paths []string) string {
	names := paths
	more := ""
	if len(paths) > 3 {
		names, more = paths[:3], fmt.Sprintf(" and %d more", len(paths)-3)
	}
	return fmt.Sprintf("kilroy-bot run: uncommitted changes to %s%s are not in this run, which reads HEAD: commit them to run them", strings.Join(names, ", "), more)
}

// agentRuntimeCache is where the agent runtime's ported programs
// (agents.runtime) are kept in dataDir: an absolute path, as jails bind
// them by it.
func agentRuntimeCache(dataDir string) (string, error) {
	p, err := filepath.Abs(filepath.Join(dataDir, "agent-runtime"))
	if err != nil {
		return "", fmt.Errorf("the agent runtime's directory in the data dir %s: %w", dataDir, err)
	}
	return p, nil
}
