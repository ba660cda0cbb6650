package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// toolDOT is a clean pipeline without a coding agent, which a repository
// check would warn about without an agents file.
const toolDOT = `digraph ci {
  start [shape=Mdiamond]
  build [shape=parallelogram, tool_command="true"]
  exit [shape=Msquare]
  start -> build -> exit
}
`

// What `validate` checks without files: the repository's .kilroy/, each
// .dot as a pipeline and config.yml as configuration, with positions.
func TestValidateRepository(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string // in the repository
		wantCode int
		wantOut  []string // lines the output must contain, with FILE for the config's path
		wantErr  string
	}{
		{
			name:    "pipelines only",
			files:   map[string]string{".kilroy/ci.dot": toolDOT, ".kilroy/lint.dot": toolDOT, ".kilroy/notes.txt": "x"},
			wantOut: []string{"0 errors, 0 warnings in 2 files"},
		},
		{
			name: "config with a misspelt key",
			files: map[string]string{".kilroy/ci.dot": toolDOT,
				".kilroy/config.yml": "version: 1\npipelines:\n  ci:\n    grpah: .kilroy/ci.dot\n"},
			wantCode: 1,
			wantOut: []string{
				`FILE:4:5: error: unknown key "grpah" in pipelines.ci (known: graph, on, command, image); did you mean "graph"? [config]`,
				"      4 |     grpah: .kilroy/ci.dot",
				"        |     ^",
				"1 error, 0 warnings in 2 files",
			},
		},
		{
			name: "config with an image that is no reference",
			files: map[string]string{".kilroy/ci.dot": toolDOT,
				".kilroy/config.yml": "version: 1\nimage: golang:1.23\npipelines:\n  ci:\n    image: Golang:1.23\n"},
			wantCode: 1,
			wantOut: []string{
				`FILE:5:5: error: pipelines.ci.image: "Golang:1.23" is not an image reference; write one like golang:1.23-bookworm, ghcr.io/acme/ci-tools:3 or NAME@sha256:DIGEST, or host for the bot's own toolchain [config]`,
				"1 error, 0 warnings in 2 files",
			},
		},
		{
			name: "config naming a missing graph",
			files: map[string]string{".kilroy/ci.dot": toolDOT,
				".kilroy/config.yml": "version: 1\npipelines:\n  ci: {}\n  fix:\n    graph: .kilroy/fix.dot\n"},
			wantCode: 1,
			wantOut: []string{
				`FILE:5:12: error: pipeline "fix": its graph .kilroy/fix.dot does not exist [config_graph_exists]`,
				"  fix: kilroy-bot init --template agent-fix writes .kilroy/fix.dot; or add .kilroy/fix.dot, fix `graph:`, or remove pipeline fix",
			},
		},
		{
			name: "config pointing a toolchain variable at a host directory",
			files: map[string]string{".kilroy/ci.dot": toolDOT,
				".kilroy/config.yml": "version: 1\nartifact_policy:\n  env:\n    overrides:\n      python:\n        VIRTUAL_ENV: /proc\n"},
			wantCode: 1,
			wantOut: []string{
				`FILE:6:9: error: artifact_policy.env.overrides.python.VIRTUAL_ENV: "/proc" is a host path: a repository's variables are never mounts, so a node sees nothing of the host there (only the worktree, the run's directories, its own /tmp and HOME, and the repository's caches); remove the key, or give a path relative to the worktree [config]`,
				"1 error, 0 warnings in 2 files",
			},
		},
		{
			name:     "a broken pipeline beside a clean config",
			files:    map[string]string{".kilroy/ci.dot": "digraph ci { a -> b }\n", ".kilroy/config.yml": "version: 1\n"},
			wantCode: 1,
			wantOut:  []string{"4 errors, 0 warnings in 2 files"},
		},
		// A box node no backend could run: without an agents file once per
		// pipeline; with .kilroy/agents.yml (which init writes) per node,
		// with what the run would fail it with.
		{
			name:    "agent pipeline without an agents file",
			files:   map[string]string{".kilroy/ci.dot": cleanDOT, ".kilroy/lint.dot": toolDOT},
			wantOut: []string{"warning: node implement runs a coding agent (shape=box), and no agent backend is given to check against [agent_backend]", "0 errors, 1 warning in 2 files"},
		},
		{
			name: "agent pipeline whose provider the agents file lacks",
			files: map[string]string{".kilroy/ci.dot": strings.Replace(cleanDOT, `prompt="Implement it"`, `prompt="Implement it", llm_provider=openai`, 1),
				".kilroy/agents.yml": "agents:\n  backends:\n    local:\n      kind: cli\n      cli: command\n      command: [\"true\"]\n      no_key: true\n"},
			wantOut: []string{"allowed: local (cli command, provider none) [agent_backend]", ", or the node's llm_provider / llm_model", "0 errors, 1 warning in 1 file"},
		},
		{
			name: "agent pipeline whose backend's key is not set",
			files: map[string]string{".kilroy/ci.dot": cleanDOT,
				".kilroy/agents.yml": "agents:\n  backends:\n    api:\n      kind: api\n      api: anthropic\n      model: m\n      key_env: KILROY_TEST_UNSET_KEY\n"},
			wantOut: []string{"needs a provider key: set the environment variable KILROY_TEST_UNSET_KEY for kilroy-bot (agents.backends.api.key_env names it) [agent_backend]", "0 errors, 1 warning in 1 file"},
		},
		{
			name: "agent pipeline the agents file can run",
			files: map[string]string{".kilroy/ci.dot": cleanDOT,
				".kilroy/agents.yml": "agents:\n  backends:\n    local:\n      kind: cli\n      cli: command\n      command: [\"true\"]\n      no_key: true\n"},
			wantOut: []string{"0 errors, 0 warnings in 1 file"},
		},
		{
			name:     "config.yaml is not read",
			files:    map[string]string{".kilroy/ci.dot": toolDOT, ".kilroy/config.yaml": "version: 1\n"},
			wantCode: 2,
			wantErr:  "config.yaml is not read: kilroy-bot reads .kilroy/config.yml; rename it",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := t.TempDir()
			writeTree(t, filepath.Join(repo, ".git", "HEAD"), "ref: refs/heads/main\n")
			for p, c := range tt.files {
				writeTree(t, filepath.Join(repo, p), c)
			}
			// From a subdirectory: the repository is found above it.
			sub := filepath.Join(repo, "docs")
			if err := os.MkdirAll(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := runV("--repo", sub)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.wantCode, out, errOut)
			}
			cfg := filepath.Join(repo, ".kilroy", "config.yml")
			for _, w := range tt.wantOut {
				if w = strings.ReplaceAll(w, "FILE", cfg); !strings.Contains(out, w+"\n") {
					t.Errorf("stdout lacks the line\n%s\ngot:\n%s", w, out)
				}
			}
			if !strings.Contains(errOut, tt.wantErr) {
				t.Errorf("stderr %q, want it to contain %q", errOut, tt.wantErr)
			}
		})
	}
}

// A config.yml given by name is checked as configuration, not parsed as
// DOT; beside its .kilroy/ the graphs it names are checked too.
func TestValidateConfigArgument(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, ".kilroy", "config.yml")
	writeTree(t, cfg, "version: 1\nlimits:\n  run_timout: 5m\n")
	code, out, _ := runV(cfg)
	want := cfg + `:3:3: error: unknown key "run_timout" in limits (known: run_timeout, node_timeout, max_cost_usd, max_tokens); did you mean "run_timeout"? [config]`
	if code != 1 || !strings.Contains(out, want+"\n") || strings.Contains(out, "[syntax]") {
		t.Errorf("exit %d, output:\n%s\nwant exit 1 and the line\n%s", code, out, want)
	}
	writeTree(t, cfg, "version: 1\npipelines:\n  ci: {}\n")
	code, out, _ = runV(cfg)
	if want := `pipeline "ci": its graph .kilroy/ci.dot does not exist`; code != 1 || !strings.Contains(out, want) {
		t.Errorf("exit %d, output:\n%s\nwant exit 1 saying %q", code, out, want)
	}
	writeTree(t, filepath.Join(dir, ".kilroy", "ci.dot"), cleanDOT)
	if code, out, _ = runV(cfg); code != 0 || !strings.HasSuffix(out, "0 errors, 0 warnings in 1 file\n") {
		t.Errorf("exit %d, output:\n%s\nwant a clean file", code, out)
	}
}

// What init writes validates clean, for every template.
func TestInitThenValidate(t *testing.T) {
	repo := t.TempDir()
	writeTree(t, filepath.Join(repo, ".git", "HEAD"), "ref: refs/heads/main\n")
	for _, tmpl := range []string{"ci-go", "agent-fix", "config"} {
		if code, _, stderr := runCmd("init", "--repo", repo, "--template", tmpl); code != 0 {
			t.Fatalf("init --template %s: exit %d: %s", tmpl, code, stderr)
		}
	}
	// The agents file init writes is checked: clean once its key is set
	// in the shell, else a warning saying which variable to set.
	t.Setenv("ANTHROPIC_API_KEY", "")
	code, out, errOut := runV("--repo", repo)
	if want := "set the environment variable ANTHROPIC_API_KEY"; code != 0 || !strings.Contains(out, want) || !strings.HasSuffix(out, "0 errors, 1 warning in 3 files\n") {
		t.Errorf("without the key: exit %d, stdout:\n%s\nstderr:\n%s\nwant 0 and one warning saying %q", code, out, errOut, want)
	}
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-placeholder")
	code, out, errOut = runV("--repo", repo)
	if code != 0 || !strings.HasSuffix(out, "0 errors, 0 warnings in 3 files\n") {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s\nwant 0 and a clean summary of 3 files", code, out, errOut)
	}
}
