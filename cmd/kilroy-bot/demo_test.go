package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestDemoScript runs README's first command, examples/demo.sh, with this
// test binary as kilroy-bot: it exits 0 only when the example's run fails
// the way it is meant to, on the vet finding, and says so; it shows the
// terminal summary (not the Markdown report), then the next steps, and
// says nothing about building since it builds nothing.
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
			wantStdout: "kilroy/ci: 3 of 5 nodes passed · vet failed (1 finding)\n",
			wantStderr: []string{"demo: OK: the run failed as intended, on the vet finding at main.go:9:21",
				"\nNext:\n", "/repo log --stat kilroy/run/ci/", "run/report.md\n", " init && ", " gc\n"},
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
			for _, markdown := range []string{"| ", "```", "❌ `"} {
				if strings.Contains(out.String(), markdown) {
					t.Errorf("stdout has Markdown (%q), want the terminal summary:\n%s", markdown, out.String())
				}
			}
			if strings.Contains(errb.String(), "building kilroy-bot") {
				t.Errorf("stderr talks of building with KILROY_BOT set:\n%s", errb.String())
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
	want := []string{"./examples/demo.sh", "go test -race -count=1 -timeout 60m ./..."}
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

// Building with a warm cache is quick, so the demo does not announce the
// minutes a first build takes (it did on every run). Skipped with -short:
// it builds kilroy-bot.
func TestDemoNoFirstBuildNoticeWhenWarm(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: this test builds kilroy-bot")
	}
	for _, tool := range []string{"bash", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed: the demo needs it to build kilroy-bot", tool)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	warm := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(t.TempDir(), "kilroy-bot"), ".")
	if out, err := warm.CombinedOutput(); err != nil {
		t.Fatalf("go build (to warm the cache): %v\n%s", err, out)
	}
	cmd := exec.CommandContext(ctx, "bash", "../../examples/demo.sh")
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "KILROY_BOT=") }),
		"TMPDIR="+t.TempDir())
	var errb bytes.Buffer
	cmd.Stderr = &errb
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("demo.sh: %v\nstderr:\n%s", err, errb.String())
	}
	if strings.Contains(errb.String(), "first build") {
		t.Errorf("the demo announces a first build with a warm cache:\n%s", errb.String())
	}
}
