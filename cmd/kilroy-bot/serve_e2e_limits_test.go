package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestServeE2EGraphCaps: a pull request whose pipeline has more nodes or
// edges than the server allows, or whose configuration names more
// pipelines than it allows, fails the kilroy/config check with a message
// naming the file and the setting; nothing runs. The first case uses the
// default caps (10,000 nodes and 64 pipelines), the second a policy's.
func TestServeE2EGraphCaps(t *testing.T) {
	var flat strings.Builder
	flat.WriteString("digraph ci {\n  start [shape=Mdiamond]\n  done [shape=Msquare]\n  start -> done\n ")
	for i := range 10_000 {
		fmt.Fprintf(&flat, " n%d;", i)
	}
	flat.WriteString("\n}\n")
	var many strings.Builder
	many.WriteString("version: 1\npipelines:\n")
	for i := range 65 {
		fmt.Fprintf(&many, "  p%d:\n    graph: .kilroy/ci.dot\n", i)
	}
	tests := []struct {
		name   string
		policy string
		files  map[string]string
		path   string
		line   int
		want   string
	}{
		{"nodes over the default", "", map[string]string{".kilroy/ci.dot": flat.String()}, ".kilroy/ci.dot", 5,
			".kilroy/ci.dot has more than 10000 nodes, the most a pipeline may have (server policy limits.max_graph_nodes)"},
		{"edges over a policy's", "limits: {max_graph_edges: 2}\n",
			map[string]string{".kilroy/ci.dot": ciDOT(failingVet)}, ".kilroy/ci.dot", 0,
			".kilroy/ci.dot has more than 2 edges, the most a pipeline may have (server policy limits.max_graph_edges)"},
		{"pipelines over the default", "", map[string]string{".kilroy/config.yml": many.String()}, ".kilroy/config.yml", 1,
			"65 pipelines, more than this server's limit of 64 per configuration (server policy limits.max_pipelines)"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newE2E(t, e2eOptions{policy: tc.policy})
			n := 40 + i
			sha := e.repo.Commit(t, fmt.Sprintf("feature-%d", n), tc.files, "grow")
			e.deliver("pull_request", e.openPR("opened", pr{number: n, sha: sha, files: []string{tc.path}}))
			runs := e.waitSettled(sha, "kilroy/config")
			e.waitIdle()
			if len(e.checkRuns(sha)) != 1 {
				t.Fatalf("check runs on the head:\n%s\nwant only kilroy/config", e.describeChecks())
			}
			r := runs[0]
			found := false
			for _, a := range r.Annotations {
				found = found || a.Path == tc.path && (tc.line == 0 || a.StartLine == tc.line) && strings.Contains(a.Message, tc.want)
			}
			if r.Conclusion != "failure" || !found {
				t.Errorf("kilroy/config %s with annotations %+v\nwant a failure on %s:%d saying %q", r.Conclusion, r.Annotations, tc.path, tc.line, tc.want)
			}
		})
	}
}
