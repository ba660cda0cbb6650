package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunWithAgents runs a box node through a CLI agent configured with
// --agents: a script that does the work and writes the stage status file.
// The octagon after it checks the work, so the run passes only if the
// agent really ran in the worktree.
func TestRunWithAgents(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "fake-agent.sh")
	writeFile(t, script, "#!/usr/bin/env bash\necho hi > hello.txt\nprintf '{\"status\":\"success\"}' > \"$KILROY_STAGE_STATUS_PATH\"\n", 0o755)
	agents := filepath.Join(dir, "agents.yml")
	writeFile(t, agents, "agents:\n  default: local\n  backends:\n    local:\n      kind: cli\n      cli: command\n      no_key: true\n      command: ["+dotQuote(script)+", \"{prompt_file}\"]\n", 0o644)
	repo := newRepo(t, map[string]string{".kilroy/ci.dot": dotFor(`
  fix [shape=box, prompt="Create hello.txt containing hi"]
  check [shape=octagon, command="grep -q hi hello.txt"]
  start -> fix -> check -> exit`)})

	code, stdout, stderr := runCmd("run", "--repo", repo, "--run-dir", filepath.Join(dir, "run"), "--agents", agents)
	if code != 0 {
		t.Fatalf("run --agents: exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(runBranchFileList(t, repo), "hello.txt") {
		t.Errorf("the agent's hello.txt is not on the run branch")
	}

	code, _, stderr = runCmd("run", "--repo", repo, "--run-dir", filepath.Join(dir, "run2"), "--agents", filepath.Join(dir, "missing.yml"))
	if code != 2 || !strings.Contains(stderr, "--agents") {
		t.Errorf("missing agents file: exit %d, stderr %q; want 2 naming --agents", code, stderr)
	}
	bad := filepath.Join(dir, "bad.yml")
	writeFile(t, bad, "agents:\n  backendz: {}\n", 0o644)
	code, _, stderr = runCmd("run", "--repo", repo, "--run-dir", filepath.Join(dir, "run3"), "--agents", bad)
	if code != 2 || !strings.Contains(stderr, "--agents: "+bad+`:2:3: unknown key "backendz" in agents`) || !strings.Contains(stderr, `did you mean "backends"?`) {
		t.Errorf("unknown key in agents file: exit %d, stderr %q; want 2 naming the key", code, stderr)
	}
}

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func runBranchFileList(t *testing.T, repo string) string {
	t.Helper()
	return strings.Join(runBranchFiles(t, repo), "\n")
}
