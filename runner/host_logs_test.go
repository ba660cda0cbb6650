package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/policy"
	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
)

func execIn(t *testing.T, stage, command string) (attractor.ExecResult, error) {
	t.Helper()
	h := &nodeHost{policy: &policy.Resolved{}, env: EnvInputs{Host: sandbox.HostEnv()}}
	return h.Exec(context.Background(), attractor.ExecRequest{
		Argv: []string{"bash", "-c", command}, Dir: t.TempDir(),
		StdoutPath: filepath.Join(stage, "stdout.log"), StderrPath: filepath.Join(stage, "stderr.log"),
		MaxLogBytes: 1 << 20, TailBytes: 1 << 10,
	})
}

// The log files are made while the process starts; what it writes at
// once, on both streams, is all in them and in the tails.
func TestExecLogsHoldAllOutput(t *testing.T) {
	stage := t.TempDir()
	res, err := execIn(t, stage, `for i in $(seq 1 2000); do echo "out $i"; echo "err $i" >&2; done`)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("exec: %v (exit %d)", err, res.ExitCode)
	}
	for _, log := range []struct{ prefix, file string }{{"out", "stdout.log"}, {"err", "stderr.log"}} {
		var want strings.Builder
		for i := 1; i <= 2000; i++ {
			fmt.Fprintf(&want, "%s %d\n", log.prefix, i)
		}
		got, err := os.ReadFile(filepath.Join(stage, log.file))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(got), want.String()); diff != "" {
			t.Errorf("%s (-got +want):\n%s", log.file, diff)
		}
	}
	if !strings.HasSuffix(res.StdoutTail, "out 2000\n") || !strings.HasSuffix(res.StderrTail, "err 2000\n") {
		t.Errorf("tails end %q / %q", tailEnd(res.StdoutTail), tailEnd(res.StderrTail))
	}
}

// A log that cannot be made fails the Exec, naming the file.
func TestExecLogUncreatable(t *testing.T) {
	stage := filepath.Join(t.TempDir(), "missing")
	_, err := execIn(t, stage, "echo hi")
	if err == nil || !strings.Contains(err.Error(), filepath.Join(stage, "stdout.log")) {
		t.Fatalf("exec: %v, want an error naming the stdout log", err)
	}
}

func tailEnd(s string) string { return s[max(0, len(s)-20):] }
