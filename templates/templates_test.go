package templates_test

import (
	"io/fs"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/policy"
	"github.com/kilroy-bot/kilroy-bot/templates"
)

// pipelineFiles lists the pipelines of every template.
func pipelineFiles(t *testing.T) []string {
	t.Helper()
	files, err := fs.Glob(templates.FS(), "*/.kilroy/*.dot")
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestNames(t *testing.T) {
	want := []string{"agent-fix", "ci-generic", "ci-go", "ci-java", "ci-node", "ci-python", "ci-rust"}
	if diff := cmp.Diff(templates.Names(), want); diff != "" {
		t.Errorf("Names (-got +want):\n%s", diff)
	}
	// Every template is something to copy: it has a pipeline.
	var withPipeline []string
	for _, f := range pipelineFiles(t) {
		withPipeline = append(withPipeline, strings.Split(f, "/")[0])
	}
	withPipeline = slices.Compact(withPipeline)
	if diff := cmp.Diff(withPipeline, want); diff != "" {
		t.Errorf("templates with a .kilroy/*.dot (-got +want):\n%s", diff)
	}
}

// What users copy must load without errors and without warnings: a
// starter that warns teaches people to ignore warnings.
func TestPipelinesLoadClean(t *testing.T) {
	files := pipelineFiles(t)
	want := []string{"agent-fix/.kilroy/fix.dot", "ci-generic/.kilroy/ci.dot", "ci-go/.kilroy/ci.dot",
		"ci-java/.kilroy/ci.dot", "ci-node/.kilroy/ci.dot", "ci-python/.kilroy/ci.dot", "ci-rust/.kilroy/ci.dot"}
	if diff := cmp.Diff(files, want); diff != "" {
		t.Errorf("pipelines (-got +want):\n%s", diff)
	}
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			src, err := fs.ReadFile(templates.FS(), f)
			if err != nil {
				t.Fatal(err)
			}
			p, ds, err := attractor.Load(f, src)
			if err != nil {
				t.Errorf("Load: %v", err)
			}
			for _, d := range ds {
				if d.Severity == attractor.SeverityError || d.Severity == attractor.SeverityWarning {
					t.Errorf("%s\n  fix: %s", d, d.Fix)
				}
			}
			if p != nil && p.Goal == "" {
				t.Errorf("%s has no goal: the check run summary and agent prompts show it", f)
			}
		})
	}
}

// The sample config parses strictly, and every pipeline it names has its
// graph in a template.
func TestConfigParses(t *testing.T) {
	data, err := fs.ReadFile(templates.FS(), templates.ConfigFile)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := policy.ParseRepoConfig(".kilroy/config.yml", data)
	if err != nil {
		t.Fatalf("ParseRepoConfig:\n%v", err)
	}
	got := map[string][]string{}
	for name, p := range cfg.Pipelines {
		got[name] = []string{} // a pipeline no template provides shows up empty
		for _, tmpl := range templates.Names() {
			if _, err := fs.Stat(templates.FS(), path.Join(tmpl, p.Graph)); err == nil {
				got[name] = append(got[name], tmpl)
			}
		}
	}
	want := map[string][]string{
		"ci":  {"ci-generic", "ci-go", "ci-java", "ci-node", "ci-python", "ci-rust"},
		"fix": {"agent-fix"},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("templates providing each configured pipeline's graph (-got +want):\n%s", diff)
	}
	// The sample shows the fix pipeline as command-only: an agent run
	// costs tokens and must not start on every push.
	if fix := cfg.Pipelines["fix"]; len(fix.On.PullRequest) != 0 || !fix.Command {
		t.Errorf("fix pipeline: on.pull_request %v, command %v; want none and true", fix.On.PullRequest, fix.Command)
	}
}
