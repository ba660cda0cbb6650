package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/runner/agent/agenttest"
	"github.com/kilroy-bot/kilroy-bot/runner/image/imagetest"
)

// pathProbe is a node's script in the tests of what a node sees of where
// it runs: it records its environment, directory, mounts, the sandbox's
// command line, what its git says and, given one as $1 (an agent CLI's
// prompt file), that file, under probe-<tag>/ in its stage directory;
// then reports success through the stage status file.
func pathProbe(tag string) string {
	return `set -e; [ "$(cat /proc/sys/kernel/hostname)" = kilroy-sandbox ] || { echo UNJAILED >&2; exit 99; }; ` +
		`d="$KILROY_STAGE_LOGS_DIR/probe-` + tag + `"; mkdir -p "$d"; ` +
		`env > "$d/env"; pwd > "$d/pwd"; cat /proc/self/mountinfo > "$d/mountinfo"; ` +
		`tr '\0' ' ' < /proc/1/cmdline > "$d/cmdline"; ` +
		`echo ` + tag + ` > seen-` + tag + `.txt; ` +
		`{ git rev-parse --git-dir && git status --short; } > "$d/git" 2>&1; ` +
		`if [ -n "${1:-}" ]; then cat "$1" > "$d/prompt"; fi; ` +
		`printf '{"status":"success"}' > "$KILROY_STAGE_STATUS_PATH"`
}

// findingProbe is pathProbe for a verify node that then reports a
// finding by the absolute path a compiler in the jail prints, and fails.
func findingProbe(tag string) string {
	return pathProbe(tag) + `; echo "$PWD/pkg/x.go:3:1: jailed finding"; exit 1`
}

// judgeProbe is pathProbe for a node that then fails through its status
// file, although its command exits 0.
func judgeProbe(tag string) string {
	return pathProbe(tag) + `; printf '{"status":"fail","failure_reason":"written in the jail"}' > "$KILROY_STAGE_STATUS_PATH"`
}

// probePipeline has a node of every kind run pathProbe: a tool node
// first (a cold jail), a command agent CLI with a verify_command, the API
// agent's shell tool, a tool node and a verify node after a tool node
// (prewarmed jails). The verify node fails with a finding, and its
// failure leads to a tool node that fails through its status file.
func probePipeline() string {
	return dotFor(`  first [shape=parallelogram, tool_command=` + dotQuote(pathProbe("tool-cold")) + `]
  cli [shape=box, prompt="Do the work", verify_command=` + dotQuote(pathProbe("verify-command")) + `]
  api [shape=box, prompt="Do the work", llm_provider=anthropic]
  second [shape=parallelogram, tool_command=` + dotQuote(pathProbe("tool-warm")) + `]
  check [shape=octagon, command=` + dotQuote(findingProbe("verify-warm")) + `]
  judge [shape=parallelogram, tool_command=` + dotQuote(judgeProbe("tool-judge")) + `]
  start -> first -> cli -> api -> second -> check -> exit
  check -> judge [condition="outcome=fail"]
  judge -> exit`)
}

// probeNodes are the stage directory and tag of every probe of
// probePipeline.
var probeNodes = map[string]string{"tool-cold": "first", "cli-agent": "cli", "verify-command": "cli",
	"api-shell": "api", "tool-warm": "second", "verify-warm": "check", "tool-judge": "judge"}

// probeAgents is the agents section of probePipeline: the command CLI
// "local" (the default) that runs pathProbe with its prompt file, and the
// API agent "anthropic" on srv, which runs pathProbe in its shell tool.
func probeAgents(srvURL string) map[string]any {
	return map[string]any{"default": "local", "backends": map[string]any{
		"local": map[string]any{"kind": "cli", "cli": "command", "no_key": true,
			"command": []string{"sh", "-c", pathProbe("cli-agent"), "sh", "{prompt_file}"}},
		"anthropic": map[string]any{"kind": "api", "api": "anthropic", "base_url": srvURL, "model": "fake-model"},
	}}
}

// newProbeModel is the fake model server of the API agent's probe.
func newProbeModel(t *testing.T) *agenttest.Server {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-api03-E2ETESTKEY0123456789abcdefXYZ")
	return agenttest.New(t, agenttest.Tool("shell", map[string]any{"command": pathProbe("api-shell")}),
		agenttest.Text("Done. OUTCOME:SUCCESS"))
}

// checkProbes checks what every probe of probePipeline recorded in the
// run's stage directories (nodes): the jail's fixed paths, working git,
// and none of bad, host paths and names of the run. Field 4 of
// mountinfo, where a bind's source lies in its own filesystem, is the
// kernel's (docs/serve.md §11): the mount points and the rest are the
// jail's. The API agent's prompts (srv) name the jail's paths too.
func checkProbes(t *testing.T, nodes string, srv *agenttest.Server, bad []string) {
	t.Helper()
	for tag, node := range probeNodes {
		d := filepath.Join(nodes, node, "probe-"+tag)
		files := map[string]string{}
		for _, name := range []string{"env", "pwd", "mountinfo", "cmdline", "git", "prompt"} {
			b, err := os.ReadFile(filepath.Join(d, name))
			if err != nil && name != "prompt" {
				t.Errorf("%s: %v", tag, err)
			}
			files[name] = string(b)
		}
		files["mountinfo"] = withoutMountRoots(files["mountinfo"])
		for name, body := range files {
			for _, b := range bad {
				if strings.Contains(body, b) {
					t.Errorf("%s's %s shows %q:\n%s", tag, name, b, body)
				}
			}
		}
		home := "/home/kilroy" // a private tmpfs; an agent CLI's is its own, in its stage directory
		if tag == "cli-agent" {
			home = "/kilroy/stage/home"
		}
		for _, want := range []string{"\nPWD=/workspace\n", "\nHOME=" + home + "\n", "\nKILROY_STAGE_STATUS_PATH=/kilroy/stage/status.json\n",
			"\nKILROY_STAGE_LOGS_DIR=/kilroy/stage\n", "\nKILROY_STAGE_STATUS_FALLBACK_PATH=/workspace/.kilroy-status.json\n",
			"\nGOMODCACHE=/kilroy/cache/gomodcache\n", "\nGOCACHE=/kilroy/cache/gocache\n"} {
			if !strings.Contains("\n"+files["env"], want) {
				t.Errorf("%s's environment lacks %q:\n%s", tag, strings.TrimSpace(want), files["env"])
			}
		}
		if files["pwd"] != "/workspace\n" {
			t.Errorf("%s's pwd: %q, want /workspace", tag, files["pwd"])
		}
		if !strings.HasPrefix(files["git"], "/kilroy/git/worktrees/workspace\n") || !strings.Contains(files["git"], "?? seen-"+tag+".txt\n") {
			t.Errorf("%s's git: want the jail's git dir and its own untracked file:\n%s", tag, files["git"])
		}
		for _, mp := range []string{" /workspace ", " /kilroy/stage ", " /kilroy/cache ", " /kilroy/git "} {
			if !strings.Contains(files["mountinfo"], mp) {
				t.Errorf("%s's mounts: none at %s:\n%s", tag, mp, files["mountinfo"])
			}
		}
		if tag == "cli-agent" && !strings.Contains(files["prompt"], "git worktree /workspace.") {
			t.Errorf("the agent CLI's prompt does not name its worktree as it sees it:\n%s", files["prompt"])
		}
	}
	reqs := srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("the API agent made no request")
	}
	system, _ := json.Marshal(reqs[0].Body["system"])
	if !strings.Contains(string(system), "git worktree /workspace.") || !strings.Contains(string(system), "/kilroy/stage/status.json") {
		t.Errorf("the API agent's system prompt does not name the jail's paths: %s", system)
	}
	for _, b := range bad {
		if strings.Contains(string(system), b) {
			t.Errorf("the API agent's system prompt shows %q: %s", b, system)
		}
	}
}

// withoutMountRoots is mountinfo without the root of each mount (field 4).
func withoutMountRoots(mountinfo string) string {
	var out []string
	for _, line := range strings.Split(mountinfo, "\n") {
		if f := strings.Fields(line); len(f) > 4 {
			out = append(out, strings.Join(append(f[:3:3], f[4:]...), " "))
		}
	}
	return strings.Join(out, "\n") + "\n"
}

// A sandboxed `kilroy-bot run` shows its nodes no host path: a tool node
// in a cold jail and one in a prewarmed one, a verify node, a command
// agent CLI and its verify_command, and the API agent's shell tool see
// the worktree at /workspace, their stage directory at /kilroy/stage, the
// caches at /kilroy/cache, HOME at /home/kilroy, in their environment,
// working directory, mounts and the sandbox's command line, and none of
// the test's directories (data dir, run dir, repository), nor the run's
// ID in a path; their git works. A finding the verify node prints by its
// jail path is one on the repository's file, and a status file written
// in the jail fails the node after it as written. The same on an image
// root.
func TestRunNodesSeeNoHostPath(t *testing.T) {
	needSandbox(t)
	for _, image := range []bool{false, true} {
		name := "host root"
		if image {
			name = "image root"
		}
		t.Run(name, func(t *testing.T) {
			srv := newProbeModel(t)
			dir := t.TempDir()
			agents := filepath.Join(dir, "agents.yml")
			body, err := json.Marshal(map[string]any{"agents": probeAgents(srv.URL)})
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, agents, string(body), 0o644)
			repo := newRepo(t, map[string]string{".kilroy/ci.dot": probePipeline(), "pkg/x.go": "package pkg\n\n// x\n"})
			runDir := filepath.Join(dir, "run")
			args := []string{"run", "--repo", repo, "--run-dir", runDir, "--data-dir", filepath.Join(dir, "data"), "--agents", agents}
			if image {
				args = append(args, "--image", probeImage(t))
			}
			code, stdout, stderr := runCmd(args...)
			if code != 1 || !strings.Contains(stdout+stderr, "written in the jail") {
				t.Fatalf("run exited %d, want 1 with the status file's reason\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			id := strings.TrimPrefix(runBranch(t, repo), "kilroy/run/ci/")
			checkProbes(t, filepath.Join(runDir, "nodes"), srv,
				[]string{filepath.Dir(dir), filepath.Dir(repo), id + "/", "/caches/", "policy-managed-roots"})
			var st struct {
				Status   string `json:"status"`
				Findings []struct {
					Path string `json:"path"`
					Line int    `json:"line"`
				} `json:"findings"`
			}
			b, err := os.ReadFile(filepath.Join(runDir, "nodes", "check", "status.json"))
			if err == nil {
				err = json.Unmarshal(b, &st)
			}
			if err != nil || st.Status != "fail" || len(st.Findings) != 1 || st.Findings[0].Path != "pkg/x.go" || st.Findings[0].Line != 3 {
				t.Errorf("the verify node's status.json: %v\n%s\nwant fail with a finding on pkg/x.go:3", err, b)
			}
		})
	}
}

// probeImage pushes an image holding what pathProbe and the shell tool
// run to a registry of the test's and returns its reference.
func probeImage(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	imagetest.Rootfs(t, root, "bash", "sh", "env", "cat", "tr", "git", "pwd", "mkdir")
	ref := imagetest.Registry(t) + "/test/probe:1"
	imagetest.Push(t, ref, imagetest.Image(t, root, []string{"PATH=/usr/bin:/bin"}))
	return ref
}
