package runner

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/policy"
)

func TestCommandPipelines(t *testing.T) {
	cfg := &policy.RepoConfig{Pipelines: map[string]policy.Pipeline{
		"ci":     {Name: "ci", Command: true},
		"lint":   {Name: "lint", Command: true},
		"deploy": {Name: "deploy", Command: false},
	}}
	tests := []struct {
		want      []string
		wantNames []string
		wantMsg   string // substring; "" for none
	}{
		{nil, []string{"ci", "lint"}, ""},
		{[]string{"lint"}, []string{"lint"}, ""},
		{[]string{"lnit"}, nil, "did you mean `lint`?"},
		{[]string{"deploy"}, nil, "`deploy` may not be started by a comment"},
		{[]string{"ci", "nope"}, nil, "there is no pipeline `nope`"},
	}
	for _, tt := range tests {
		names, msg := commandPipelines(cfg, tt.want)
		if diff := cmp.Diff(names, tt.wantNames); diff != "" {
			t.Errorf("commandPipelines(%q) names (-got +want):\n%s", tt.want, diff)
		}
		if (tt.wantMsg == "") != (msg == "") || !strings.Contains(msg, tt.wantMsg) {
			t.Errorf("commandPipelines(%q) msg = %q, want it to contain %q", tt.want, msg, tt.wantMsg)
		}
	}
}

func TestPipelineOfCheck(t *testing.T) {
	for name, want := range map[string]string{
		"kilroy/ci":        "ci",
		"kilroy/ci/verify": "ci",
		"kilroy/config":    "",
		"other/ci":         "",
		"":                 "",
	} {
		if got := pipelineOfCheck(name); got != want {
			t.Errorf("pipelineOfCheck(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestAnyMatch(t *testing.T) {
	files := []string{"cmd/main.go", "docs/readme.md"}
	if !anyMatch([]string{"**/*.go"}, files) {
		t.Error("**/*.go does not match cmd/main.go")
	}
	if anyMatch([]string{"*.go", "go.mod"}, files) {
		t.Error("*.go matched a file in a subdirectory")
	}
}
