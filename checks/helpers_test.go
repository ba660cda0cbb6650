package checks

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/kilroy-bot/kilroy-bot/attractor"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// ciDOT is the pipeline most tests run: a build, a vet verify node, an
// artifact check, and a fix loop reachable only when vet fails. The build
// label carries quotes and brackets for the Mermaid escaping.
const ciDOT = `digraph ci {
  goal="Keep \"main\" green"
  start [shape=Mdiamond]
  build [shape=parallelogram, tool_command="go build ./...", label="Build [all] \"pkgs\" (fast) | {x}"]
  vet [shape=octagon, command="go vet ./..."]
  artifacts [type="verify.artifacts"]
  done [shape=Msquare]
  start -> build -> vet
  vet -> artifacts [condition="outcome=success"]
  artifacts -> done
}
`

// branchDOT has a conditional with a path the run does not take.
const branchDOT = `digraph release {
  start [shape=Mdiamond]
  test [shape=octagon, command="go test ./..."]
  gate [shape=diamond]
  publish [shape=parallelogram, tool_command="make publish"]
  notes [shape=parallelogram, tool_command="make notes"]
  done [shape=Msquare]
  start -> test -> gate
  gate -> publish [condition="context.release=true", label="release"]
  gate -> notes [condition="context.release!=true"]
  publish -> done
  notes -> done
}
`

// load loads a DOT source that must be valid.
func load(t *testing.T, src string) *attractor.Pipeline {
	t.Helper()
	p, _, err := attractor.Load("test.dot", []byte(src))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return p
}

// script feeds a Recorder the events an engine would send.
type script struct {
	t *testing.T
	p *attractor.Pipeline
	r *Recorder
}

func newScript(t *testing.T, src string, info RunInfo) *script {
	p := load(t, src)
	return &script{t: t, p: p, r: NewRecorder(p, info)}
}

func (s *script) node(id string) *attractor.Node {
	n := s.p.Node(id)
	if n == nil {
		s.t.Fatalf("no node %q", id)
	}
	return n
}

func (s *script) must(err error) {
	s.t.Helper()
	if err != nil {
		s.t.Fatal(err)
	}
}

func (s *script) start(id string) *script {
	s.must(s.r.NodeStarted(context.Background(), attractor.NodeStarted{RunID: "r1", Node: s.node(id), Visit: 1, Dir: "/stages/" + id}))
	return s
}

func (s *script) attempt(id string, final bool, o attractor.Outcome, d time.Duration) *script {
	s.must(s.r.AttemptFinished(context.Background(), attractor.AttemptFinished{RunID: "r1", Node: s.node(id), Final: final, Outcome: o, Duration: d, Dir: "/stages/" + id}))
	return s
}

func (s *script) checkpoint(id, sha string) *script {
	s.must(s.r.Checkpointed(context.Background(), attractor.Checkpointed{RunID: "r1", Node: id, SHA: sha}))
	return s
}

// edge reports the transition along the declared edge from → to.
func (s *script) edge(from, to string) *script {
	for _, e := range s.p.Outgoing(from) {
		if e.To == to {
			s.must(s.r.EdgeSelected(context.Background(), attractor.EdgeSelected{RunID: "r1", From: from, To: to, Method: attractor.ByCondition, Edge: e}))
			return s
		}
	}
	s.t.Fatalf("no edge %s -> %s", from, to)
	return s
}

// pass runs id once, successfully, checkpoints it and moves on to next.
func (s *script) pass(id, sha, next string, d time.Duration) *script {
	s.start(id).attempt(id, true, attractor.Outcome{Status: attractor.StatusSuccess}, d).checkpoint(id, sha)
	if next != "" {
		s.edge(id, next)
	}
	return s
}

func (s *script) finish(res *attractor.RunResult) *RunView {
	s.must(s.r.RunFinished(context.Background(), res))
	return s.r.View()
}

// sha makes a 40-hex commit ID from a digit.
func sha(c byte) string {
	b := make([]byte, 40)
	for i := range b {
		b[i] = "0123456789abcdef"[(int(c)+i)%16]
	}
	return string(b)
}

// githubOpts renders as the server does.
func githubOpts() RenderOptions {
	return RenderOptions{
		CommitURL: func(s string) string { return "https://github.com/o/r/commit/" + s },
		RunURL:    "https://kilroy.example/runs/r1",
		LogURL:    func(n string) string { return "https://kilroy.example/runs/r1#" + n },
		Redactor:  NewRedactor(),
	}
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./checks -update to create it)", err)
	}
	if diff := cmp.Diff(got, string(want)); diff != "" {
		t.Errorf("%s mismatch (-got +want):\n%s", name, diff)
	}
}

func utf8Valid(s string) bool { return utf8.ValidString(s) }
