package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/policy"
	"github.com/kilroy-bot/kilroy-bot/runner/caches"
	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
	"github.com/kilroy-bot/kilroy-bot/secrets"
)

// nodeHost is the engine's Host for one run: processes through the
// sandbox with the one node environment, checkpoints through gitops.
type nodeHost struct {
	git      *gitops.Git
	worktree string
	branch   string
	baseSHA  string
	policy   *policy.Resolved
	env      EnvInputs
	// repoDir and runDir let Fork add worktrees for parallel branches
	// (branch.go).
	repoDir string
	runDir  RunDir
	// onCheckpoint persists the run state after each commit
	// (checkpoints.ndjson, checkpoint.json); an error fails the run.
	onCheckpoint func(ctx context.Context, sha string, req attractor.CheckpointRequest) error
}

// EnvInputs is what every node's environment is built from.
type EnvInputs struct {
	Host         map[string]string // the host environment (sandbox.HostEnv)
	SecretNames  []string          // bot secrets by variable name
	SecretValues []string          // bot secrets by value
	// Sandbox jails every node process; nil runs them in the bot's own
	// view of the machine (--insecure-no-sandbox, or a local run where
	// bubblewrap cannot work).
	Sandbox *sandbox.Sandbox
	// Caches is the directory of the run's repository caches
	// (runner/caches: caches.Dir under serve, caches.LocalDir for a local
	// run); its cache/ is where every cache variable of a node points and
	// what its jail binds read-write. Empty for a run's own, in its run
	// directory.
	Caches string
}

// nodeWorkspace is where the nodes of a run see its worktree: the jail's
// fixed path, or the worktree itself without a sandbox ("").
func nodeWorkspace(s *sandbox.Sandbox) string {
	if s == nil {
		return ""
	}
	return sandbox.WorkspacePath
}

// jail is the sandbox of one process of a node of this run.
func (h *nodeHost) jail(stageEnv map[string]string) *sandbox.Jail {
	return sandbox.NodeJail(h.env.Sandbox, h.env.Host, h.worktree, stageEnv[attractor.EnvLogsDir],
		filepath.Join(string(h.runDir), policy.ManagedRootsDir), caches.Bound(h.env.Caches))
}

// alwaysExcluded are run-time files the engine may leave in the worktree;
// they never belong on the run branch whatever the policy says.
var alwaysExcluded = []string{attractor.StatusFallbackName}

// cmd is the sandbox command of req, without its output.
func (h *nodeHost) cmd(req attractor.ExecRequest) sandbox.Cmd {
	env := sandbox.NodeEnv(sandbox.EnvSpec{
		Host:         h.env.Host,
		Policy:       h.policy.Env,
		Image:        h.env.Sandbox.ImageEnv(),
		Stage:        req.StageEnv,
		Caches:       caches.Bound(h.env.Caches),
		SecretNames:  h.env.SecretNames,
		SecretValues: h.env.SecretValues,
	})
	return sandbox.Cmd{Argv: req.Argv, Dir: req.Dir, Env: env, Timeout: req.Timeout, Jail: h.jail(req.StageEnv)}
}

var _ attractor.Prewarmer = (*nodeHost)(nil)

// Prewarm has the sandbox make req's jail now, for the Exec of the same
// request that the engine expects next (attractor.Prewarmer).
func (h *nodeHost) Prewarm(req attractor.ExecRequest) {
	sandbox.Prewarm(h.cmd(req))
}

func (h *nodeHost) Exec(ctx context.Context, req attractor.ExecRequest) (attractor.ExecResult, error) {
	logs := openNodeLogs(req.StdoutPath, req.StderrPath, capOr(req.MaxLogBytes))
	stdout, stderr := logs.writers()
	outTail, errTail := sandbox.NewTail(tailOr(req.TailBytes)), sandbox.NewTail(tailOr(req.TailBytes))
	c := h.cmd(req)
	c.Stdout, c.Stderr = teeWriter{stdout, outTail}, teeWriter{stderr, errTail}
	res, err := sandbox.Run(ctx, c)
	out := attractor.ExecResult{
		ExitCode: res.ExitCode, TimedOut: res.TimedOut, Canceled: res.Canceled, Duration: res.Duration,
		StdoutTail: string(outTail.Bytes()), StderrTail: string(errTail.Bytes()),
		LimitHit:    res.LimitHit(string(errTail.Bytes())),
		Environment: missingCommand(h.env.Sandbox, res.ExitCode, string(errTail.Bytes())),
	}
	if lerr := logs.close(); lerr != nil {
		return out, fmt.Errorf("log files of %s: %w", req.Argv[0], lerr)
	}
	if err != nil && errors.Is(err, sandbox.ErrNotFound) {
		return out, fmt.Errorf("start %s: %w", req.Argv[0], err)
	}
	return out, err
}

func (h *nodeHost) Checkpoint(ctx context.Context, req attractor.CheckpointRequest) (string, error) {
	res, err := h.git.Checkpoint(ctx, h.worktree, gitops.CheckpointSpec{
		RunID: req.RunID, NodeID: req.Node.ID, Status: string(req.Status), Branch: h.branch,
		Exclude:  slices.Concat(h.policy.Checkpoint.ExcludeGlobs, alwaysExcluded),
		Excluded: h.policy.Excluded,
		Vet:      h.vetSecrets,
	})
	if err != nil {
		return "", err
	}
	if h.onCheckpoint != nil {
		if err := h.onCheckpoint(ctx, res.SHA, req); err != nil {
			return res.SHA, err
		}
	}
	return res.SHA, nil
}

// vetSecrets refuses a checkpoint whose files hold a secret the bot knows,
// in any of the forms it takes on the way out: the file and line are
// named, the secret never, and nothing of the node is committed (and so
// nothing pushed).
func (h *nodeHost) vetSecrets(paths []string) error {
	sc := h.env.scanner()
	for _, p := range paths {
		f, found, err := sc.ScanPath(filepath.Join(h.worktree, filepath.FromSlash(p)))
		if errors.Is(err, fs.ErrNotExist) {
			continue // a deletion
		}
		if err != nil {
			return fmt.Errorf("look for secrets in %s: %w", p, err)
		}
		if found {
			return &attractor.CheckpointRefusedError{Reason: fmt.Sprintf(
				"%s:%d: %s; remove it from the file (and rotate it if it may have been copied elsewhere)", p, f.Line, f)}
		}
	}
	return nil
}

// scanner looks for the bot's secrets (secretList).
func (e EnvInputs) scanner() *secrets.Scanner {
	return secrets.NewScanner(e.secretList())
}

// secretList is the bot's secret values and the host's secret-named
// variables (provider keys among them).
func (e EnvInputs) secretList() []secrets.Secret {
	var list []secrets.Secret
	for _, v := range e.SecretValues {
		list = append(list, secrets.Secret{Name: "a secret of the bot (webhook secret, App key or database URL)", Value: v})
	}
	for _, name := range slices.Sorted(maps.Keys(e.Host)) {
		if sandbox.SecretName(name) || slices.Contains(e.SecretNames, name) {
			list = append(list, secrets.Secret{Name: "the value of $" + name, Value: e.Host[name]})
		}
	}
	return list
}

// scrubErrorsFile records, in a stage directory, the files the scrub
// could not rewrite (and removed).
const scrubErrorsFile = "scrub-errors.txt"

// ScrubStage replaces every form of the bot's secrets in every file of a
// stage directory once the engine has written its own (logs, the tool's
// output in status.json, its command in invocation.json, what the node
// wrote there): run directories are kept and shown on the run page. What
// could not be scrubbed was removed, and scrub-errors.txt says so.
func (h *nodeHost) ScrubStage(_ context.Context, dir string) {
	var values []string
	for _, s := range h.env.secretList() {
		values = append(values, s.Value)
	}
	if err := secrets.ScrubTree(dir, values); err != nil {
		msg := fmt.Sprintf("some files could not be scrubbed of secrets and were removed: %v\n", err)
		_ = os.WriteFile(filepath.Join(dir, scrubErrorsFile), []byte(msg), 0o644)
	}
}

// CheckArtifacts is the verify.artifacts handler: every path the run
// changed, committed since the base commit or still uncommitted in the
// worktree, is judged by the policy's deny globs and allow carve-outs.
func (h *nodeHost) CheckArtifacts(ctx context.Context, req attractor.ArtifactCheckRequest) (attractor.Outcome, error) {
	committed, uncommitted, err := h.git.ChangedSince(ctx, h.worktree, h.baseSHA)
	if err != nil {
		return attractor.Outcome{
			Status: attractor.StatusRetry, FailureClass: attractor.ClassTransientInfra,
			FailureReason: "could not list the run's changed files: " + err.Error(),
		}, nil
	}
	candidates := slices.Concat(committed, uncommitted)
	slices.Sort(candidates)
	candidates = slices.Compact(candidates)
	rep := h.policy.VerifyPaths(candidates)
	if len(rep.Offending) == 0 {
		return attractor.Outcome{
			Status: attractor.StatusSuccess,
			Notes:  fmt.Sprintf("%d changed paths checked against the artifact policy; none denied", len(candidates)),
		}, nil
	}
	return artifactViolation(rep, h.policy, committed, uncommitted), nil
}

func artifactViolation(rep policy.VerifyReport, pol *policy.Resolved, committed, uncommitted []string) attractor.Outcome {
	denyByPath := map[string]string{}
	for _, p := range rep.Offending {
		_, deny, _ := pol.VerifyDecision(p)
		denyByPath[p] = deny
	}
	return attractor.Outcome{
		Status:        attractor.StatusFail,
		FailureClass:  attractor.ClassDeterministic,
		FailureReason: "artifact_policy_violation",
		Notes: fmt.Sprintf("%d path(s) match the artifact policy's deny globs: %s",
			len(rep.Offending), strings.Join(rep.Offending, ", ")),
		FailureSignature: "artifact_policy_violation:" + strings.Join(rep.Offending, ","),
		Details: map[string]any{
			"offending_paths":       rep.Offending,
			"matched_deny_rules":    denyByPath,
			"allow_rules_evaluated": pol.Verify.AllowGlobs,
			"committed_paths":       intersect(committed, rep.Offending),
			"uncommitted_paths":     intersect(uncommitted, rep.Offending),
		},
	}
}

func intersect(list, keep []string) []string {
	out := []string{}
	for _, p := range list {
		if _, ok := slices.BinarySearch(keep, p); ok {
			out = append(out, p)
		}
	}
	return out
}

type teeWriter [2]interface{ Write([]byte) (int, error) }

func (t teeWriter) Write(p []byte) (int, error) {
	if _, err := t[0].Write(p); err != nil {
		return 0, err
	}
	return t[1].Write(p)
}

func capOr(n int64) int64 {
	if n <= 0 {
		return 10 << 20
	}
	return n
}

func tailOr(n int) int {
	if n <= 0 {
		return 8 << 10
	}
	return n
}
