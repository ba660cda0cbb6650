package runner

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/internal/gittest"
)

// TestVerifyArtifacts is the example: deny **/dist/**, allow
// keep/dist/ok.txt; a node writes web/dist/app.js, keep/dist/ok.txt and
// src/ok.go. Whether the checkpoint committed the dist files or excluded
// them, the only offending path is web/dist/app.js.
func TestVerifyArtifacts(t *testing.T) {
	write := "mkdir -p web/dist keep/dist src && echo js > web/dist/app.js && " +
		"echo ok > keep/dist/ok.txt && echo 'package ok' > src/ok.go"
	dot := pipeline(`
  build [shape=parallelogram, tool_command=` + quote(write) + `]
  artifacts [shape=octagon, type="verify.artifacts"]
  start -> build -> artifacts -> exit`)
	for _, tc := range []struct {
		name            string
		excludes        string // artifact_policy.checkpoint, YAML
		wantTree        []string
		wantCommitted   []string
		wantUncommitted []string
	}{
		{
			name:            "committed",
			wantTree:        []string{".kilroy/ci.dot", ".kilroy/config.yml", "keep/dist/ok.txt", "src/ok.go", "web/dist/app.js"},
			wantCommitted:   []string{"web/dist/app.js"},
			wantUncommitted: []string{},
		},
		{
			name:            "excluded from checkpoints",
			excludes:        "  checkpoint:\n    exclude_globs: [\"**/dist/**\"]\n",
			wantTree:        []string{".kilroy/ci.dot", ".kilroy/config.yml", "src/ok.go"},
			wantCommitted:   []string{},
			wantUncommitted: []string{"web/dist/app.js"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := "version: 1\nartifact_policy:\n" + tc.excludes +
				"  verify:\n    deny_globs: [\"**/dist/**\"]\n    allow_globs: [\"keep/dist/ok.txt\"]\n"
			repo := gittest.NewRepo(t, map[string]string{".kilroy/ci.dot": dot, ".kilroy/config.yml": cfg})
			before := snapshot(t, repo)
			p, res := runLocal(t, localOptions(t, repo))

			if res.Status != attractor.StatusFail || res.FailedNode != "artifacts" {
				t.Fatalf("run = %s at %q (%s), want fail at artifacts", res.Status, res.FailedNode, res.FailureReason)
			}
			o := res.Outcomes["artifacts"]
			if o.Status != attractor.StatusFail || o.FailureClass != attractor.ClassDeterministic ||
				o.FailureReason != "artifact_policy_violation" {
				t.Errorf("artifacts outcome = %s, %s, %q; want fail, deterministic, artifact_policy_violation",
					o.Status, o.FailureClass, o.FailureReason)
			}
			if want := "artifact_policy_violation:web/dist/app.js"; o.FailureSignature != want {
				t.Errorf("failure signature = %q, want %q", o.FailureSignature, want)
			}
			wantDetails := map[string]any{
				"offending_paths":       []string{"web/dist/app.js"},
				"matched_deny_rules":    map[string]string{"web/dist/app.js": "**/dist/**"},
				"allow_rules_evaluated": []string{"keep/dist/ok.txt"},
				"committed_paths":       tc.wantCommitted,
				"uncommitted_paths":     tc.wantUncommitted,
			}
			if diff := cmp.Diff(o.Details, wantDetails); diff != "" {
				t.Errorf("details (-got +want):\n%s", diff)
			}
			if diff := cmp.Diff(treeFiles(t, repo, p.Branch), tc.wantTree); diff != "" {
				t.Errorf("run branch files (-got +want):\n%s", diff)
			}
			// The failing node is checkpointed too, with its status.
			want := []commitMsg{
				checkpointMsg(p.RunID, "start", "success"),
				checkpointMsg(p.RunID, "build", "success"),
				checkpointMsg(p.RunID, "artifacts", "fail"),
			}
			if diff := cmp.Diff(branchCommits(t, repo, before.Head, p.Branch), want); diff != "" {
				t.Errorf("checkpoint commits (-got +want):\n%s", diff)
			}
			var finished *event
			for _, ev := range readProgress(t, p.Dir) {
				if ev.Type == "node_finished" && ev.Node == "artifacts" {
					finished = &ev
				}
			}
			if finished == nil || finished.Status != "fail" || finished.FailureClass != "deterministic" ||
				finished.Reason != "artifact_policy_violation" {
				t.Errorf("node_finished of artifacts = %+v, want fail, deterministic, artifact_policy_violation", finished)
			}
			if diff := cmp.Diff(snapshot(t, repo), before); diff != "" {
				t.Errorf("user's repository changed (-got +want):\n%s", diff)
			}
		})
	}
}
