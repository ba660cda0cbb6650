package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestDemoScript runs README's first command, examples/demo.sh, with this
// test binary as kilroy-bot: it exits 0 only when the example's run fails
// the way it is meant to, on the vet finding, and says so.
func TestDemoScript(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not installed: the demo script needs it")
	}
	for _, tc := range []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr []string
	}{
		{
			name:       "the finding",
			wantCode:   0,
			wantStdout: "main.go:9:21",
			wantStderr: []string{"demo: OK: the run failed as intended, on the vet finding at main.go:9:21"},
		},
		{
			name:       "anything else",
			args:       []string{"--answer", "nosuch=yes"},
			wantCode:   2,
			wantStderr: []string{"demo: FAILED: kilroy-bot run exited 2"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "bash", append([]string{"../../examples/demo.sh"}, tc.args...)...)
			cmd.Env = append(os.Environ(), beKilroyBot+"=1", "KILROY_BOT="+os.Args[0], "TMPDIR="+t.TempDir())
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			cmd.WaitDelay = 10 * time.Second
			err := cmd.Run()
			if _, ok := errors.AsType[*exec.ExitError](err); err != nil && !ok {
				t.Fatal(err)
			}
			if code := cmd.ProcessState.ExitCode(); code != tc.wantCode {
				t.Errorf("demo.sh exited %d, want %d\nstderr:\n%s", code, tc.wantCode, errb.String())
			}
			if !strings.Contains(out.String(), tc.wantStdout) {
				t.Errorf("stdout has no %q:\n%s", tc.wantStdout, out.String())
			}
			for _, w := range tc.wantStderr {
				if !strings.Contains(errb.String(), w) {
					t.Errorf("stderr does not say %q:\n%s", w, errb.String())
				}
			}
		})
	}
}

// TestReadmeCommands keeps README's opening promise: exactly two commands,
// the demo TestDemoScript runs and the test command .ci/run runs.
func TestReadmeCommands(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(readme), "```sh\n")
	block, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatal("README.md has no sh block")
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		cmd, _, _ := strings.Cut(line, "#")
		got = append(got, strings.TrimSpace(cmd))
	}
	want := []string{"./examples/demo.sh", "go test -race -count=1 -timeout 30m ./..."}
	if !slices.Equal(got, want) {
		t.Errorf("README's first commands = %q, want %q", got, want)
	}
	ci, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ci), "\n"+want[1]+"\n") {
		t.Errorf(".ci/run does not run README's test command %q", want[1])
	}
}
