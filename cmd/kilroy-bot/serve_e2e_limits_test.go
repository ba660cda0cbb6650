package main

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
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

// TestServeE2ECheckoutBomb: a writer's pull request of three new objects
// whose tree holds 1,001,000 one-byte files (the tree of 1,000
// trees of 1,000 files, one column wider: just over the default
// limits.max_checkout_files) fails its kilroy/ci check naming the setting,
// quickly, and nothing of the tree is written to the data dir.
func TestServeE2ECheckoutBomb(t *testing.T) {
	e := newE2E(t, e2eOptions{})
	sha := commitTreeBomb(t, e.repo, "feature-50", 1000, 1001)
	start := time.Now()
	e.deliver("pull_request", e.openPR("opened", pr{number: 50, sha: sha}))
	runs := e.waitSettled(sha, "kilroy/ci")
	t.Logf("refused %s after the delivery", time.Since(start).Round(time.Millisecond))
	r := runs[0]
	if want := "has more than 1000000 files, over this server's limit (server policy limits.max_checkout_files)"; r.Conclusion != "failure" || !strings.Contains(r.Summary+r.Text, want) {
		t.Errorf("kilroy/ci %s: %s\n%s\nwant a failure saying %q", r.Conclusion, r.Summary, r.Text, want)
	}
	files := 0
	filepath.WalkDir(e.cfg.DataDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && (d.Name() == "bomb" || len(d.Name()) == 7 && strings.HasPrefix(d.Name(), "f000")) {
			files++
		}
		return nil
	})
	if files > 0 {
		t.Errorf("%d files of the tree were written under the data dir", files)
	}
	e.waitIdle()
	e.assertAllCompleted()
}

// commitTreeBomb commits onto main of repo, as branch, main's files plus a
// directory bomb/ of outer copies of one tree of inner copies of one
// one-byte blob: three new objects besides the commit, written with git
// hash-object from trees built here.
func commitTreeBomb(t *testing.T, repo *ghapptest.Repo, branch string, outer, inner int) string {
	t.Helper()
	dir := t.TempDir()
	write := func(kind string, content []byte) string {
		f := filepath.Join(dir, kind)
		if err := os.WriteFile(f, content, 0o644); err != nil {
			t.Fatal(err)
		}
		return repo.Git(t, "hash-object", "-t", kind, "-w", f)
	}
	type entry struct{ mode, name, id string }
	tree := func(es []entry) string {
		// git orders entries by name, a tree's name as if it ended in "/".
		key := func(e entry) string {
			if e.mode == "40000" {
				return e.name + "/"
			}
			return e.name
		}
		slices.SortFunc(es, func(a, b entry) int { return strings.Compare(key(a), key(b)) })
		var b bytes.Buffer
		for _, e := range es {
			raw, err := hex.DecodeString(e.id)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%s %s\x00", e.mode, e.name)
			b.Write(raw)
		}
		return write("tree", b.Bytes())
	}
	copies := func(n int, mode, prefix, id string) []entry {
		es := make([]entry, n)
		for i := range es {
			es[i] = entry{mode, fmt.Sprintf("%s%06d", prefix, i), id}
		}
		return es
	}
	bomb := tree(copies(outer, "40000", "d", tree(copies(inner, "100644", "f", write("blob", []byte("x"))))))
	root := []entry{{"40000", "bomb", bomb}}
	for _, line := range strings.Split(repo.Git(t, "ls-tree", "main"), "\n") {
		meta, name, _ := strings.Cut(line, "\t")
		f := strings.Fields(meta)
		root = append(root, entry{strings.TrimPrefix(f[0], "0"), name, f[2]})
	}
	sha := repo.Git(t, "-c", "user.name=mallory", "-c", "user.email=m@example.test",
		"commit-tree", tree(root), "-p", repo.Ref(t, "main"), "-m", "three objects")
	repo.Git(t, "update-ref", "refs/heads/"+branch, sha)
	return sha
}
