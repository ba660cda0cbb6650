package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/policy"
	"github.com/kilroy-bot/kilroy-bot/runner/image"
	"github.com/kilroy-bot/kilroy-bot/templates"
)

// templateContent is what template name writes at path.
func templateContent(t *testing.T, name, path string) string {
	t.Helper()
	files, err := templates.Files(name)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Path == path {
			return string(f.Content)
		}
	}
	t.Fatalf("template %s has no %s", name, path)
	return ""
}

func TestInit(t *testing.T) {
	tests := []struct {
		name       string
		files      map[string]string // in the repository before init
		args       []string          // after init --repo DIR
		wantCode   int
		wantFiles  map[string]string // path -> template that wrote it
		wantStdout []string
		wantStderr []string
	}{
		{
			name:       "detects go",
			files:      map[string]string{".git/HEAD": "ref: refs/heads/main\n", "go.mod": "module x\n"},
			wantFiles:  map[string]string{".kilroy/ci.dot": "ci-go"},
			wantStdout: []string{"wrote ", filepath.Join(".kilroy", "ci.dot"), "kilroy-bot validate --repo ", "--graph ci"},
		},
		{
			name:       "detects python",
			files:      map[string]string{"pyproject.toml": "[project]\n"},
			wantFiles:  map[string]string{".kilroy/ci.dot": "ci-python"},
			wantStdout: []string{"git -C "},
		},
		{
			name:       "template by name",
			args:       []string{"--template", "agent-fix"},
			wantFiles:  map[string]string{".kilroy/fix.dot": "agent-fix", ".kilroy/agents.yml": "agent-fix"},
			wantStdout: []string{filepath.Join(".kilroy", "agents.yml") + " --graph fix", "--agents ", "key_env"},
		},
		{
			name:      "config",
			files:     map[string]string{".kilroy/ci.dot": "kept"},
			args:      []string{"--template", "config"},
			wantFiles: map[string]string{".kilroy/config.yml": "config"},
		},
		{
			name:       "unknown template",
			args:       []string{"--template", "agentfix"},
			wantCode:   2,
			wantStderr: []string{`no template "agentfix" (templates: agent-fix, ci-generic, ci-go, ci-java, ci-node, ci-python, ci-rust, config); did you mean "agent-fix"?`},
		},
		{
			name:      "detects rust",
			files:     map[string]string{"Cargo.toml": "[package]\n"},
			wantFiles: map[string]string{".kilroy/ci.dot": "ci-rust"},
		},
		{
			name:      "detects gradle",
			files:     map[string]string{"build.gradle": ""},
			wantFiles: map[string]string{".kilroy/ci.dot": "ci-java"},
		},
		{
			name:     "nothing to detect",
			wantCode: 2,
			wantStderr: []string{"The closest is ci-generic: it runs `make test`",
				"Write it with: kilroy-bot init --template ci-generic   (templates: agent-fix, ci-generic, ci-go, ci-java, ci-node, ci-python, ci-rust, config)"},
		},
		{
			name:       "project in a subdirectory",
			files:      map[string]string{"frontend/package.json": "{}"},
			wantCode:   2,
			wantStderr: []string{"The closest is ci-node: frontend/ holds a node project", "kilroy-bot init --template ci-node"},
		},
		{
			name:       "several toolchains",
			files:      map[string]string{"go.mod": "module x\n", "package.json": "{}"},
			wantCode:   2,
			wantStderr: []string{"several toolchains: choose a template with --template NAME (ci-go, ci-node)"},
		},
		{
			name:       "existing file kept",
			files:      map[string]string{".kilroy/ci.dot": "mine"},
			args:       []string{"--template", "ci-go"},
			wantCode:   2,
			wantStderr: []string{"ci.dot already exists: keep it, or pass --force to overwrite it"},
		},
		{
			name:      "existing file forced",
			files:     map[string]string{".kilroy/ci.dot": "mine"},
			args:      []string{"--template", "ci-node", "--force"},
			wantFiles: map[string]string{".kilroy/ci.dot": "ci-node"},
		},
		{
			name:       "stray argument",
			args:       []string{"ci-go"},
			wantCode:   2,
			wantStderr: []string{`unexpected argument "ci-go"`, "usage: kilroy-bot init"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := t.TempDir()
			for p, c := range tt.files {
				writeTree(t, filepath.Join(repo, p), c)
			}
			code, stdout, stderr := runCmd(append([]string{"init", "--repo", repo}, tt.args...)...)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.wantCode, stdout, stderr)
			}
			for _, w := range tt.wantStdout {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout does not say %q:\n%s", w, stdout)
				}
			}
			for _, w := range tt.wantStderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not say %q:\n%s", w, stderr)
				}
			}
			for p, c := range tt.files { // untouched unless written on purpose
				if _, over := tt.wantFiles[p]; !over {
					if got, _ := os.ReadFile(filepath.Join(repo, p)); string(got) != c {
						t.Errorf("%s changed to %q", p, got)
					}
				}
			}
			for p, tmpl := range tt.wantFiles {
				got, err := os.ReadFile(filepath.Join(repo, p))
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(string(got), templateContent(t, tmpl, p)); diff != "" {
					t.Errorf("%s (-got +want):\n%s", p, diff)
				}
			}
		})
	}
}

// --repo inside a repository writes at its root.
func TestInitFindsRepositoryRoot(t *testing.T) {
	repo := t.TempDir()
	writeTree(t, filepath.Join(repo, ".git", "HEAD"), "ref: refs/heads/main\n")
	sub := filepath.Join(repo, "cmd", "tool")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCmd("init", "--repo", sub, "--template", "ci-go"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(repo, ".kilroy", "ci.dot")); err != nil {
		t.Errorf("not written at the repository's root: %v", err)
	}
}

func TestInitHelp(t *testing.T) {
	code, stdout, stderr := runCmd("init", "-h")
	if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "usage: kilroy-bot init") {
		t.Errorf("init -h: exit %d, stdout %q, stderr %q; want 0 and the usage on stdout", code, stdout, stderr)
	}
	for _, name := range templates.Choices() {
		if !strings.Contains(stdout, "  "+name+" ") {
			t.Errorf("usage does not list template %s:\n%s", name, stdout)
		}
	}
}

// writeTree writes content at path, making its directories.
func writeTree(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// init suggests the image of the detected toolchain, commented out: in a
// config.yml of its own beside the pipeline (which, uncommented, runs
// every pipeline in it and still passes validate), in the sample config
// for --template config, and as a note when the repository has a
// config.yml already, which init leaves alone. The comment says a served
// repository's image must match the operator's images.allow, with a
// pattern that matches the suggestion.
func TestInitSuggestsImage(t *testing.T) {
	tests := []struct {
		name      string
		files     map[string]string
		args      []string
		wantImage string // the commented image: in .kilroy/config.yml
		wantNote  string // on stdout, when config.yml was there
		graphs    bool   // the sample config's pipelines ci and fix are there
	}{
		{name: "go.mod's version", files: map[string]string{"go.mod": "module x\n\ngo 1.23.4\n"}, wantImage: "golang:1.23-bookworm"},
		{name: "go.mod without go directive", files: map[string]string{"go.mod": "module x\n"}, wantImage: "golang:1-bookworm"},
		{name: "node", files: map[string]string{"package.json": "{}"}, wantImage: "node:22-bookworm"},
		{name: "python", files: map[string]string{"requirements.txt": "pytest\n"}, wantImage: "python:3.12-bookworm"},
		{name: "maven", files: map[string]string{"pom.xml": "<project/>"}, wantImage: "maven:3-eclipse-temurin-21"},
		{name: "agent-fix follows the toolchain", files: map[string]string{"Cargo.toml": "[package]\n"},
			args: []string{"--template", "agent-fix"}, wantImage: "rust:1-bookworm"},
		{name: "sample config", files: map[string]string{"go.mod": "module x\n\ngo 1.25\n"},
			args: []string{"--template", "config"}, wantImage: "golang:1.25-bookworm", graphs: true},
		{name: "config.yml kept", files: map[string]string{"package.json": "{}", ".kilroy/config.yml": "version: 1\n"},
			wantNote: "add to " + filepath.Join(".kilroy", "config.yml") + ":\n  image: node:22-bookworm\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := t.TempDir()
			for p, c := range tt.files {
				writeTree(t, filepath.Join(repo, p), c)
			}
			if tt.graphs {
				writeTree(t, filepath.Join(repo, ".kilroy", "ci.dot"), templateContent(t, "ci-go", ".kilroy/ci.dot"))
				writeTree(t, filepath.Join(repo, ".kilroy", "fix.dot"), templateContent(t, "agent-fix", ".kilroy/fix.dot"))
			}
			t.Chdir(repo)
			code, stdout, stderr := runCmd(append([]string{"init"}, tt.args...)...)
			if code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			cfgPath := filepath.Join(repo, ".kilroy", "config.yml")
			got, err := os.ReadFile(cfgPath)
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantNote != "" {
				if string(got) != tt.files[".kilroy/config.yml"] {
					t.Errorf("config.yml changed to:\n%s", got)
				}
				if !strings.Contains(stdout, tt.wantNote) || !strings.Contains(stdout, "images.allow") {
					t.Errorf("stdout does not say %q and images.allow:\n%s", tt.wantNote, stdout)
				}
				return
			}
			line := "# image: " + tt.wantImage + "\n"
			if strings.Count(string(got), line) != 1 || !strings.Contains(string(got), "images.allow") {
				t.Fatalf("config.yml does not suggest %q once with the images.allow caveat:\n%s", line, got)
			}
			assertImageAllowedByExample(t, string(got), tt.wantImage)
			before, err := policy.ParseRepoConfig(".kilroy/config.yml", got)
			if err != nil {
				t.Fatal(err)
			}
			if c := before.ImageFor("ci"); !c.IsZero() {
				t.Errorf("the commented image is in effect: %+v", c)
			}
			on := strings.Replace(string(got), line, "image: "+tt.wantImage+"\n", 1)
			after, err := policy.ParseRepoConfig(".kilroy/config.yml", []byte(on))
			if err != nil {
				t.Fatalf("uncommented: %v\n%s", err, on)
			}
			if c := after.ImageFor("ci"); c.Ref != tt.wantImage {
				t.Errorf("uncommented, pipeline ci runs in %+v, want %s", c, tt.wantImage)
			}
			if (after.Pipelines == nil) != (before.Pipelines == nil) {
				t.Errorf("uncommenting the image changed which pipelines run: %v, then %v", before.Pipelines, after.Pipelines)
			}
			writeTree(t, cfgPath, on)
			if code, stdout, stderr := runCmd("validate"); code != 0 {
				t.Errorf("validate with the image uncommented: exit %d\n%s%s", code, stdout, stderr)
			}
		})
	}
}

// assertImageAllowedByExample checks that the images.allow pattern the
// comment gives as an example (e.g. docker.io/library/golang:*) has the
// shape of a pattern that allows the suggestion's registry and repository.
func assertImageAllowedByExample(t *testing.T, cfg, ref string) {
	t.Helper()
	n, err := image.Normalize(ref)
	if err != nil {
		t.Fatalf("the suggestion %q is no reference: %v", ref, err)
	}
	if !strings.HasPrefix(n, "docker.io/library/") {
		t.Errorf("the suggestion %s is not an official image, which the comment's example pattern is for", n)
	}
	if !strings.Contains(cfg, "images.allow patterns (e.g. docker.io/library/golang:*)") {
		t.Errorf("the comment gives no example pattern:\n%s", cfg)
	}
	if ex := "docker.io/library/golang:*"; strings.HasPrefix(n, "docker.io/library/golang:") && !image.Allowed(n, []string{ex}) {
		t.Errorf("%s is not allowed by the comment's example %s", n, ex)
	}
}
