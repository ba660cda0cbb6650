package agent

import (
	"context"
	"os"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
)

// sandboxHost is the engine Host of these tests, built the way the runner
// builds its own: every process through sandbox.Run with a sandbox.NodeEnv
// environment from the same bot environment the agent gets, and the
// provider keys among the secrets (tool nodes never see them).
type sandboxHost struct{ deps Deps }

func (h sandboxHost) Exec(ctx context.Context, req attractor.ExecRequest) (attractor.ExecResult, error) {
	env := sandbox.NodeEnv(sandbox.EnvSpec{
		Host: h.deps.HostEnv, Policy: h.deps.Policy, Stage: req.StageEnv, SecretNames: h.deps.SecretNames,
		SecretValues: append([]string{testAnthropicKey, testOpenAIKey}, h.deps.SecretValues...),
	})
	limit := max(req.MaxLogBytes, 1<<20)
	stdout, err := sandbox.NewCappedFile(req.StdoutPath, limit)
	if err != nil {
		return attractor.ExecResult{ExitCode: -1}, err
	}
	defer stdout.Close()
	stderr, err := sandbox.NewCappedFile(req.StderrPath, limit)
	if err != nil {
		return attractor.ExecResult{ExitCode: -1}, err
	}
	defer stderr.Close()
	res, err := sandbox.Run(ctx, sandbox.Cmd{Argv: req.Argv, Dir: req.Dir, Env: env, Stdout: stdout, Stderr: stderr, Timeout: req.Timeout})
	stdout.Close()
	stderr.Close()
	return attractor.ExecResult{
		ExitCode: res.ExitCode, TimedOut: res.TimedOut, Canceled: res.Canceled, Duration: res.Duration,
		StdoutTail: tail(req.StdoutPath, req.TailBytes), StderrTail: tail(req.StderrPath, req.TailBytes),
	}, err
}

func (sandboxHost) Checkpoint(context.Context, attractor.CheckpointRequest) (string, error) {
	return "0000000000000000000000000000000000000000", nil
}

func tail(path string, n int) string {
	b, _ := os.ReadFile(path)
	if n > 0 && len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
}
