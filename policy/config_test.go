package policy

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const configFile = ".kilroy/config.yml"

func TestParseRepoConfigFull(t *testing.T) {
	data, err := os.ReadFile("testdata/full.yml")
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseRepoConfig(configFile, data)
	if err != nil {
		t.Fatalf("ParseRepoConfig: %v", err)
	}
	want := &RepoConfig{
		Version: 1,
		Pipelines: map[string]Pipeline{
			"ci": {Name: "ci", Graph: ".kilroy/ci.dot", Command: true, On: Trigger{
				PullRequest: []string{"opened", "synchronize", "reopened", "ready_for_review"},
				Paths:       []string{"**/*.go", "go.mod"}, MergeGroup: true,
			}},
			"nightly": {Name: "nightly", Graph: ".kilroy/nightly.dot", On: Trigger{PullRequest: []string{}, MergeGroup: false}},
			"docs": {Name: "docs", Graph: ".kilroy/docs.dot", Command: true, On: Trigger{
				PullRequest: DefaultPullRequestActions(), Drafts: true, MergeGroup: true,
			}},
		},
		ArtifactPolicy: ArtifactPolicy{
			Profiles: ProfilesPolicy{Mode: ModeExplicit, Explicit: []string{"go", "node"}},
			Env: EnvPolicy{
				Overrides:    map[string]map[string]string{"go": {"GOFLAGS": "-mod=readonly"}},
				ManagedRoots: map[string]string{"node": "node-cache", "go": "go-cache"},
			},
			Checkpoint: CheckpointPolicy{ExcludeGlobs: []string{"**/node_modules/**", "**/dist/**"}},
			Verify:     VerifyPolicy{DenyGlobs: []string{"**/dist/**"}, AllowGlobs: []string{"keep/dist/ok.txt"}},
		},
		Limits: Limits{RunTimeout: 60 * time.Minute, NodeTimeout: 15 * time.Minute},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("config (-got +want):\n%s", diff)
	}
}

func TestParseRepoConfigDefaults(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want *RepoConfig
	}{
		{
			name: "version only: discovery, default policy and limits",
			src:  "version: 1\n",
			want: &RepoConfig{Version: 1, ArtifactPolicy: ArtifactPolicy{}.WithDefaults(),
				Limits: Limits{RunTimeout: DefaultRunTimeout, NodeTimeout: DefaultNodeTimeout}},
		},
		{
			name: "agent budgets",
			src:  "version: 1\nlimits:\n  max_cost_usd: 2.5\n  max_tokens: 400000\n",
			want: &RepoConfig{Version: 1, ArtifactPolicy: ArtifactPolicy{}.WithDefaults(),
				Limits: Limits{RunTimeout: DefaultRunTimeout, NodeTimeout: DefaultNodeTimeout, MaxCostUSD: 2.5, MaxTokens: 400000}},
		},
		{
			name: "empty pipelines declares none",
			src:  "version: 1\npipelines: {}\nlimits:\n  run_timeout: 1h30m\n  node_timeout: 90s\n",
			want: &RepoConfig{Version: 1, Pipelines: map[string]Pipeline{}, ArtifactPolicy: ArtifactPolicy{}.WithDefaults(),
				Limits: Limits{RunTimeout: 90 * time.Minute, NodeTimeout: 90 * time.Second}},
		},
		{
			name: "pipeline with no settings",
			src:  "version: 1\npipelines:\n  lint:\n",
			want: &RepoConfig{Version: 1, ArtifactPolicy: ArtifactPolicy{}.WithDefaults(),
				Pipelines: map[string]Pipeline{"lint": {Name: "lint", Graph: ".kilroy/lint.dot", Command: true,
					On: Trigger{PullRequest: DefaultPullRequestActions(), MergeGroup: true}}},
				Limits: Limits{RunTimeout: DefaultRunTimeout, NodeTimeout: DefaultNodeTimeout}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseRepoConfig(configFile, []byte(tt.src))
			if err != nil {
				t.Fatalf("ParseRepoConfig: %v", err)
			}
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("config (-got +want):\n%s", diff)
			}
		})
	}
}

// TestParseRepoConfigErrors checks each rejected file reports the right
// place and key. want lists the errors as "line:col key | message part".
func TestParseRepoConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"unknown top-level key", "version: 1\npipeline:\n  ci: {}\n",
			[]string{`2:1 pipeline | unknown key "pipeline" at top level (known: version, pipelines, artifact_policy, limits, image); did you mean "pipelines"?`}},
		{"unknown pipeline key", "version: 1\npipelines:\n  ci:\n    grpah: x.dot\n",
			[]string{`4:5 pipelines.ci.grpah | unknown key "grpah" in pipelines.ci (known: graph, on, command, image); did you mean "graph"?`}},
		{"unknown trigger key", "version: 1\npipelines:\n  ci:\n    graph: .kilroy/ci.dot\n    on:\n      drafts: true\n      pipeline: x\n",
			[]string{`7:7 pipelines.ci.on.pipeline | .kilroy/config.yml:7:7: unknown key "pipeline" in pipelines.ci.on (known: pull_request, paths, drafts, merge_group)`}},
		{"unknown policy key", "version: 1\nartifact_policy:\n  checkpoints: {}\n",
			[]string{`3:3 artifact_policy.checkpoints | unknown key "checkpoints" in artifact_policy (known: profiles, env, checkpoint, verify)`}},
		{"unknown profiles key", "version: 1\nartifact_policy:\n  profiles:\n    modes: auto\n",
			[]string{`4:5 artifact_policy.profiles.modes | unknown key "modes" in artifact_policy.profiles (known: mode, explicit); did you mean "mode"?`}},
		{"unknown env key", "version: 1\nartifact_policy:\n  env:\n    override: {}\n",
			[]string{`4:5 artifact_policy.env.override | (known: overrides, managed_roots)`}},
		{"unknown checkpoint key", "version: 1\nartifact_policy:\n  checkpoint:\n    exclude: []\n",
			[]string{`4:5 artifact_policy.checkpoint.exclude | (known: exclude_globs)`}},
		{"unknown verify key", "version: 1\nartifact_policy:\n  verify:\n    deny: []\n",
			[]string{`4:5 artifact_policy.verify.deny | (known: deny_globs, allow_globs)`}},
		{"a cost budget of nothing", "version: 1\nlimits:\n  max_cost_usd: 0\n",
			[]string{`3:3 limits.max_cost_usd | `}},
		{"a token budget that is no number", "version: 1\nlimits:\n  max_tokens: lots\n",
			[]string{`3:3 limits.max_tokens | `}},
		{"unknown limits key", "version: 1\nlimits:\n  timeout: 5m\n",
			[]string{`3:3 limits.timeout | (known: run_timeout, node_timeout, max_cost_usd, max_tokens)`}},
		{"unknown override profile (schema)", "version: 1\nartifact_policy:\n  env:\n    overrides:\n      ruby: {X: y}\n",
			[]string{`5:7 artifact_policy.env.overrides.ruby | unknown key "ruby" in artifact_policy.env.overrides (known: generic, go, java, node, python, rust)`}},
		{"unknown override profile near a known one (schema)", "version: 1\nartifact_policy:\n  env:\n    overrides:\n      rusty: {X: y}\n",
			[]string{`5:7 artifact_policy.env.overrides.rusty | (known: generic, go, java, node, python, rust); did you mean "rust"?`}},
		{"several unknown keys in file order", "version: 1\nlimits:\n  a: 1\npipelines:\n  ci:\n    b: 2\n",
			[]string{`3:3 limits.a | unknown key "a"`, `6:5 pipelines.ci.b | unknown key "b"`}},
		{"legacy checkpoint key", "version: 1\ngit:\n  checkpoint_exclude_globs: ['**/target/**']\n",
			[]string{`3:3 git.checkpoint_exclude_globs | git.checkpoint_exclude_globs is no longer supported: move these globs to artifact_policy.checkpoint.exclude_globs`}},
		{"bad version", "version: 2\n", []string{`1:1 version | version: must be 1, got 2`}},
		{"version as string", "version: \"1\"\n", []string{`1:1 version | version: must be 1, got "1"`}},
		{"missing version", "pipelines: {}\n", []string{`1:1  | missing key "version" at top level`}},
		{"bad duration", "version: 1\nlimits:\n  run_timeout: soon\n",
			[]string{`3:3 limits.run_timeout | limits.run_timeout: "soon" is not valid (A positive duration as pipeline attributes write them: units ms, s, m, h or d, alone or combined, such as 250ms, 90s, 15m, 1h30m or 1d.)`}},
		{"duration without unit", "version: 1\nlimits:\n  node_timeout: 15\n",
			[]string{`3:3 limits.node_timeout | limits.node_timeout: expected string, got number`}},
		{"zero duration", "version: 1\nlimits:\n  node_timeout: 0s\n",
			[]string{`3:3 limits.node_timeout | invalid duration "0s"; use a positive duration with units ms, s, m, h or d, alone or combined, such as 250ms, 90s, 15m, 1h30m or 1d`}},
		{"node longer than run", "version: 1\nlimits:\n  run_timeout: 10m\n  node_timeout: 15m\n",
			[]string{`4:3 limits.node_timeout | 15m0s is longer than run_timeout 10m0s`}},
		{"schema: wrong type deep inside", "version: 1\npipelines:\n  ci:\n    on:\n      drafts: sometimes\n",
			[]string{`5:7 pipelines.ci.on.drafts | pipelines.ci.on.drafts: expected boolean, got string`}},
		{"schema: bad enum item in a flow list", "version: 1\npipelines:\n  ci:\n    on:\n      pull_request: [opened, closed]\n",
			[]string{`5:30 pipelines.ci.on.pull_request[1] | value must be one of 'opened', 'synchronize', 'reopened', 'ready_for_review', got "closed"`}},
		{"schema: bad mode", "version: 1\nartifact_policy:\n  profiles:\n    mode: sometimes\n",
			[]string{`4:5 artifact_policy.profiles.mode | value must be one of 'auto', 'explicit', 'disabled'`}},
		{"schema: top level not a mapping", "- version\n", []string{`1:1  | top level: expected object, got array`}},
		{"bad glob", "version: 1\nartifact_policy:\n  verify:\n    allow_globs:\n      - keep/**\n      - \"[oops\"\n",
			[]string{`6:9 artifact_policy.verify.allow_globs[1] | invalid glob "[oops"`}},
		{"bad paths glob", "version: 1\npipelines:\n  ci:\n    on:\n      paths: [\"{a,b\"]\n",
			[]string{`5:15 pipelines.ci.on.paths[0] | invalid glob "{a,b"`}},
		{"bad pipeline name", "version: 1\npipelines:\n  ci.v2: {}\n",
			[]string{`3:3 pipelines.ci.v2 | "ci.v2" is not a pipeline name`}},
		{"bad override name", "version: 1\nartifact_policy:\n  env:\n    overrides:\n      go: {\"GO FLAGS\": x}\n",
			[]string{`5:12 artifact_policy.env.overrides.go.GO FLAGS | "GO FLAGS" is not an environment variable name`}},
		{"graph outside the repository", "version: 1\npipelines:\n  ci:\n    graph: ../ci.dot\n",
			[]string{`4:5 pipelines.ci.graph | "../ci.dot" is not a repository-relative path`}},
		{"explicit mode without profiles", "version: 1\nartifact_policy:\n  profiles:\n    mode: explicit\n",
			[]string{`3:3 artifact_policy.profiles.explicit | mode explicit needs at least one profile`}},
		{"duplicate key", "version: 1\nlimits:\n  run_timeout: 5m\n  run_timeout: 6m\n",
			[]string{`4:3 limits.run_timeout | duplicate key "run_timeout" in limits (first at line 3)`}},
		{"alias", "version: 1\npipelines:\n  a: &p {command: false}\n  b: *p\n",
			[]string{`4:6 pipelines.b | pipelines.b: YAML aliases (*p) are not supported`}},
		{"merge key", "version: 1\npipelines:\n  a:\n    <<: {command: false}\n",
			[]string{`4:5 pipelines.a | pipelines.a: YAML merge keys (<<) are not supported`}},
		{"YAML syntax", "version: 1\n  bad: [\n", []string{`2:1  | invalid YAML: mapping values are not allowed in this context`}},
		{"empty file", "# nothing\n", []string{`1:1  | the file is empty; start it with version: 1`}},
		{"two documents", "version: 1\n---\nversion: 1\n", []string{`2:1  | only one YAML document is allowed`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseRepoConfig(configFile, []byte(tt.src))
			var errs ConfigErrors
			if !errors.As(err, &errs) {
				t.Fatalf("ParseRepoConfig: got %v, want ConfigErrors", err)
			}
			if len(errs) != len(tt.want) {
				t.Fatalf("got %d errors, want %d:\n%v", len(errs), len(tt.want), err)
			}
			for i, e := range errs {
				loc, msg, _ := strings.Cut(tt.want[i], " | ")
				got := fmtLoc(e)
				if got != loc || !strings.Contains(e.Error(), msg) || e.File != configFile {
					t.Errorf("error %d:\n got  %s | %s\n want %s | …%s…", i, got, e.Error(), loc, msg)
				}
			}
		})
	}
}

func fmtLoc(e *ConfigError) string {
	return fmt.Sprintf("%d:%d %s", e.Line, e.Col, e.Key)
}

func TestDefaultRepoConfig(t *testing.T) {
	got, err := DefaultRepoConfig([]string{".kilroy/release.dot", ".kilroy/ci.dot"})
	if err != nil {
		t.Fatalf("DefaultRepoConfig: %v", err)
	}
	on := Trigger{PullRequest: DefaultPullRequestActions(), MergeGroup: true}
	want := &RepoConfig{
		Version: 1,
		Pipelines: map[string]Pipeline{
			"ci":      {Name: "ci", Graph: ".kilroy/ci.dot", On: on, Command: true},
			"release": {Name: "release", Graph: ".kilroy/release.dot", On: on, Command: true},
		},
		ArtifactPolicy: ArtifactPolicy{}.WithDefaults(),
		Limits:         Limits{RunTimeout: 60 * time.Minute, NodeTimeout: 15 * time.Minute},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("default config (-got +want):\n%s", diff)
	}
	parsed, err := ParseRepoConfig(configFile, []byte("version: 1\npipelines:\n  ci:\n  release:\n"))
	if err != nil {
		t.Fatalf("ParseRepoConfig: %v", err)
	}
	if diff := cmp.Diff(parsed, want); diff != "" {
		t.Errorf("a config listing the same pipelines differs from the default (-got +want):\n%s", diff)
	}
}

func TestDefaultPipelinesRejects(t *testing.T) {
	for _, files := range [][]string{
		{".kilroy/ci.v2.dot"},
		{".kilroy/my pipeline.dot"},
		{"/abs/ci.dot"},
		{".kilroy/ci.gv"},
		{".kilroy/ci.dot", "other/ci.dot"},
	} {
		if _, err := DefaultPipelines(files); err == nil {
			t.Errorf("DefaultPipelines(%q): got no error", files)
		}
	}
}

func FuzzParseRepoConfig(f *testing.F) {
	if data, err := os.ReadFile("testdata/full.yml"); err == nil {
		f.Add(data)
	}
	f.Add([]byte("version: 1\npipelines:\n  ci:\n    on: {paths: ['**/*.go']}\n"))
	f.Add([]byte("version: 1\nx: &a {b: *a}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseRepoConfig(configFile, data)
		if (cfg == nil) == (err == nil) {
			t.Fatalf("ParseRepoConfig returned config %v and error %v", cfg, err)
		}
		var ce *ConfigError
		if err != nil && !errors.As(err, &ce) {
			t.Fatalf("error is not a *ConfigError: %v", err)
		}
	})
}
