package server

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/policy"
	"github.com/kilroy-bot/kilroy-bot/runner"
)

// TestCapsClamp: run and node timeouts above the server's maxima are
// lowered to them, with a note naming each; those within stay as they are.
func TestCapsClamp(t *testing.T) {
	src := []byte(`digraph p {
  start [shape=Mdiamond]
  exit [shape=Msquare]
  slow [shape=parallelogram, tool_command="true", timeout="100000d"]
  quick [shape=parallelogram, tool_command="true", timeout="30s"]
  plain [shape=parallelogram, tool_command="true"]
  start -> slow -> quick -> plain -> exit
}`)
	caps := Caps{MaxRunTimeout: 2 * time.Hour, MaxNodeTimeout: time.Hour}
	tests := []struct {
		name      string
		limits    policy.Limits
		wantLim   policy.Limits
		wantNodes map[string]time.Duration
		wantNotes []string
	}{
		{name: "above both", limits: policy.Limits{RunTimeout: 100000 * 24 * time.Hour, NodeTimeout: 3 * time.Hour},
			wantLim:   policy.Limits{RunTimeout: 2 * time.Hour, NodeTimeout: time.Hour},
			wantNodes: map[string]time.Duration{"slow": time.Hour, "quick": 30 * time.Second, "plain": time.Hour},
			wantNotes: []string{"`limits.run_timeout` of 2400000h0m0s", "`limits.node_timeout` of 3h0m0s", "The `timeout` of `slow` in .kilroy/ci.dot"}},
		{name: "within", limits: policy.Limits{RunTimeout: time.Hour, NodeTimeout: 15 * time.Minute},
			wantLim:   policy.Limits{RunTimeout: time.Hour, NodeTimeout: 15 * time.Minute},
			wantNodes: map[string]time.Duration{"slow": time.Hour, "quick": 30 * time.Second, "plain": 15 * time.Minute},
			wantNotes: []string{"The `timeout` of `slow`"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &policy.RepoConfig{Limits: tt.limits}
			sel, err := runner.ParsePipeline(cfg, "ci", policy.Pipeline{Graph: ".kilroy/ci.dot"}, src)
			if err != nil {
				t.Fatal(err)
			}
			notes := caps.clamp(sel)
			if diff := cmp.Diff(sel.Config.Limits, tt.wantLim); diff != "" {
				t.Errorf("limits (-got +want):\n%s", diff)
			}
			if cfg.Limits != tt.limits {
				t.Errorf("the repository's config was changed in place: %+v", cfg.Limits)
			}
			got := map[string]time.Duration{}
			for id := range tt.wantNodes {
				got[id] = sel.Pipeline.Node(id).Timeout
			}
			if diff := cmp.Diff(got, tt.wantNodes); diff != "" {
				t.Errorf("node timeouts (-got +want):\n%s", diff)
			}
			if len(notes) != len(tt.wantNotes) {
				t.Fatalf("notes = %q, want %d", notes, len(tt.wantNotes))
			}
			for i, w := range tt.wantNotes {
				if !strings.HasPrefix(notes[i], w) {
					t.Errorf("note %d = %q, want it to start %q", i, notes[i], w)
				}
			}
		})
	}
	if notes := (Caps{}).clamp(mustParse(t, src)); len(notes) != 0 {
		t.Errorf("no caps: notes %q, want none", notes)
	}
}

func mustParse(t *testing.T, src []byte) *runner.Selection {
	t.Helper()
	sel, err := runner.ParsePipeline(&policy.RepoConfig{Limits: policy.Limits{RunTimeout: 1000 * time.Hour}}, "ci",
		policy.Pipeline{Graph: ".kilroy/ci.dot"}, src)
	if err != nil {
		t.Fatal(err)
	}
	return sel
}

// TestServerLoadsEachGraphOnce: an event whose configuration names one
// graph as three pipelines loads it once: their runs' checks get the same
// validated Pipeline.
func TestServerLoadsEachGraphOnce(t *testing.T) {
	e := newServerEnv(t)
	e.seed(nil)
	e.gh.SetPermission("octo", "widgets", "alice", "write")
	config := "version: 1\npipelines:\n  a:\n    graph: .kilroy/ci.dot\n  b:\n    graph: .kilroy/ci.dot\n  c:\n    graph: .kilroy/ci.dot\n"
	pr := e.openPR(9, "alice", map[string]string{".kilroy/ci.dot": ciPipeline, ".kilroy/config.yml": config})
	e.handle(e.prEvent("opened", pr))
	var graphs []*attractor.Pipeline
	for _, p := range []string{"a", "b", "c"} {
		runs := e.reps.queuedRuns(p)
		if len(runs) != 1 || runs[0].Graph == nil {
			t.Fatalf("pipeline %s: %d queued runs (%+v), want one with its graph", p, len(runs), runs)
		}
		graphs = append(graphs, runs[0].Graph)
		defer e.reps.waitEnd(t, runs[0].RunID)
	}
	if graphs[0] != graphs[1] || graphs[1] != graphs[2] {
		t.Errorf("the three pipelines of one graph got %p, %p, %p: each pipeline loaded it again", graphs[0], graphs[1], graphs[2])
	}
}
