package attractor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// execHost is the test Host: it runs commands with os/exec the way
// runner/sandbox does (own process group, killed as a group on timeout or
// cancel, WaitDelay, empty stdin) and records checkpoints.
type execHost struct {
	mu          sync.Mutex
	checkpoints []recordedCheckpoint
	execs       []ExecRequest
	execTime    time.Duration
	// failCheckpoint makes Checkpoint fail after this node.
	failCheckpoint string
}

func (h *execHost) Exec(ctx context.Context, req ExecRequest) (ExecResult, error) {
	began := time.Now()
	defer func() {
		h.mu.Lock()
		h.execTime += time.Since(began)
		h.execs = append(h.execs, req)
		h.mu.Unlock()
	}()
	if req.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, req.Timeout)
		defer cancel()
	}
	stdout, err := os.Create(req.StdoutPath)
	if err != nil {
		return ExecResult{ExitCode: -1}, err
	}
	defer stdout.Close()
	stderr, err := os.Create(req.StderrPath)
	if err != nil {
		return ExecResult{ExitCode: -1}, err
	}
	defer stderr.Close()
	cmd := exec.CommandContext(ctx, req.Argv[0], req.Argv[1:]...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = req.Dir, stdout, stderr
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + req.Dir}
	for k, v := range req.StageEnv {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	runErr := cmd.Run()
	res := ExecResult{ExitCode: cmd.ProcessState.ExitCode(), Duration: time.Since(began)}
	if ctx.Err() != nil {
		res.TimedOut = errors.Is(ctx.Err(), context.DeadlineExceeded)
		res.Canceled = !res.TimedOut
	}
	var exitErr *exec.ExitError
	if runErr != nil && !errors.As(runErr, &exitErr) && !errors.Is(runErr, exec.ErrWaitDelay) {
		return res, runErr
	}
	res.StdoutTail = fileTail(req.StdoutPath, req.TailBytes)
	res.StderrTail = fileTail(req.StderrPath, req.TailBytes)
	return res, nil
}

func fileTail(path string, n int) string {
	b, _ := os.ReadFile(path)
	if n > 0 && len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// recordedCheckpoint is a checkpoint request with the snapshot of the
// state it was made at.
type recordedCheckpoint struct {
	CheckpointRequest
	State *State
}

func (h *execHost) Checkpoint(_ context.Context, req CheckpointRequest) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if req.Node.ID == h.failCheckpoint {
		return "", errors.New("git commit: disk full")
	}
	h.checkpoints = append(h.checkpoints, recordedCheckpoint{req, req.State()})
	return fmt.Sprintf("sha%03d", len(h.checkpoints)), nil
}

func (h *execHost) checkpointNodes() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, c := range h.checkpoints {
		out = append(out, c.Node.ID)
	}
	return out
}

// recorder is a Listener that writes every event as one line.
type recorder struct {
	mu     sync.Mutex
	events []string
	edges  []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	r.events = append(r.events, s)
	r.mu.Unlock()
}

func (r *recorder) NodeStarted(_ context.Context, ev NodeStarted) error {
	r.add("start " + ev.Node.ID)
	return nil
}

func (r *recorder) AttemptFinished(_ context.Context, ev AttemptFinished) error {
	r.add(fmt.Sprintf("attempt %s#%d %s", ev.Node.ID, ev.Attempt, ev.Outcome.Status))
	return nil
}

func (r *recorder) EdgeSelected(_ context.Context, ev EdgeSelected) error {
	s := fmt.Sprintf("%s->%s %s", ev.From, ev.To, ev.Method)
	r.mu.Lock()
	r.edges = append(r.edges, s)
	r.mu.Unlock()
	r.add("edge " + s)
	return nil
}

func (r *recorder) Checkpointed(_ context.Context, ev Checkpointed) error {
	r.add("checkpoint " + ev.Node)
	return nil
}

func (r *recorder) RunFinished(_ context.Context, res *RunResult) error {
	r.add("finished " + string(res.Status))
	return nil
}

func (r *recorder) edgeList() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.edges...)
}

// harness runs pipelines in temporary directories.
type harness struct {
	t         *testing.T
	host      *execHost
	rec       *recorder
	cfg       RunConfig
	sleeps    []time.Duration
	workspace string
	runDir    string
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{t: t, host: &execHost{}, rec: &recorder{}, workspace: t.TempDir(), runDir: t.TempDir()}
	h.cfg = RunConfig{
		RunID:     "run1",
		Workspace: h.workspace,
		RunDir:    h.runDir,
		Host:      h.host,
		Listener:  h.rec,
		Sleep: func(ctx context.Context, d time.Duration) error {
			h.sleeps = append(h.sleeps, d)
			return ctx.Err()
		},
		Rand: func() float64 { return 0.5 },
	}
	return h
}

func (h *harness) run(p *Pipeline) *RunResult {
	h.t.Helper()
	res, err := Run(context.Background(), p, h.cfg)
	if err != nil {
		h.t.Fatalf("Run: %v", err)
	}
	return res
}

// stageFile reads a file of a node's stage directory.
func (h *harness) stageFile(node, name string) string {
	h.t.Helper()
	b, err := os.ReadFile(filepath.Join(h.runDir, node, name))
	if err != nil {
		h.t.Fatalf("read stage file: %v", err)
	}
	return string(b)
}

// mustLoad loads a DOT pipeline that must be valid.
func mustLoad(t *testing.T, src string, types ...string) *Pipeline {
	t.Helper()
	p, ds, err := Load("test.dot", []byte(src), WithHandlerTypes(types...))
	if err != nil {
		t.Fatalf("Load: %v\n%v", err, ds)
	}
	return p
}

// loadAnyway loads a pipeline the validator rejects, for testing what the
// engine does with it at run time.
func loadAnyway(t *testing.T, src string) *Pipeline {
	t.Helper()
	p, _, err := Load("test.dot", []byte(src))
	var ve *ValidationError
	if err != nil && !errors.As(err, &ve) {
		t.Fatalf("Load: %v", err)
	}
	return p
}

// chain builds a DOT pipeline start -> nodes... -> done with the given
// node statements (id [attrs]) in order.
func chain(graphAttrs string, nodes ...string) string {
	var b strings.Builder
	b.WriteString("digraph t {\n" + graphAttrs + "\nstart [shape=Mdiamond]\ndone [shape=Msquare]\n")
	ids := []string{"start"}
	for _, n := range nodes {
		b.WriteString(n + "\n")
		ids = append(ids, strings.Fields(n)[0])
	}
	ids = append(ids, "done")
	b.WriteString(strings.Join(ids, " -> ") + "\n}\n")
	return b.String()
}
