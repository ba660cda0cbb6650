package checks

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// TestPropertyUnhandledFailureIsNeverGreen runs generated pipelines
// (verify steps, fan-outs under every join rule, diamonds, condition
// edges, retry targets, goal gates, retries) through the engine with the
// Recorder listening, and holds every run to DESIGN §3: while a verify
// node's last attempt failed and no edge handled that failure, neither the
// run's result nor the summary check's conclusion is success. The seeds
// are fixed, so a failure names a pipeline that fails again.
func TestPropertyUnhandledFailureIsNeverGreen(t *testing.T) {
	const runs = 200
	var unhandledRuns int
	for seed := range uint64(runs) {
		g := newPipelineGen(seed)
		src := g.pipeline()
		p, ds, err := attractor.Load("gen.dot", []byte(src))
		if err != nil {
			t.Fatalf("seed %d: generated pipeline does not load: %v\n%v\n%s", seed, err, ds, src)
		}
		tr := &trace{}
		rec := NewRecorder(p, RunInfo{Pipeline: "gen", RunID: "r" + strconv.FormatUint(seed, 10)})
		var host attractor.Host = &scriptHost{calls: map[string]int{}}
		if seed%2 == 1 { // branches at once, in workspaces of their own
			host = forkingScriptHost{host.(*scriptHost)}
		}
		res, err := attractor.Run(context.Background(), p, attractor.RunConfig{
			RunID: "r", Workspace: t.TempDir(), RunDir: t.TempDir(), Host: host,
			Listener: attractor.Listeners{tr, rec},
			Sleep:    func(ctx context.Context, _ time.Duration) error { return ctx.Err() },
			Rand:     func() float64 { return 0.5 },
		})
		if err != nil {
			t.Fatalf("seed %d: Run: %v\n%s", seed, err, src)
		}
		_, conclusion := RunConclusion(rec.View())
		unhandled := tr.unhandled(g.members, g.verify)
		if len(unhandled) > 0 {
			unhandledRuns++
			if res.Status == attractor.StatusSuccess || conclusion == ConclusionSuccess {
				t.Errorf("seed %d: verify nodes %v failed unhandled, yet run = %s and summary = %s\n%s",
					seed, unhandled, res.Status, conclusion, src)
			}
		}
		if (res.Status == attractor.StatusSuccess) != (conclusion == ConclusionSuccess) {
			t.Errorf("seed %d: run = %s but summary = %s\n%s", seed, res.Status, conclusion, src)
		}
	}
	// The generator must reach the case the property is about.
	if unhandledRuns < runs/10 {
		t.Errorf("only %d of %d generated runs left a failure unhandled; the generator lost its teeth", unhandledRuns, runs)
	}
}

// scriptHost plays the commands the generator writes, without a process:
// "pass", "fail", "flaky:K:ID" (fails its first K runs), "status" (writes a
// failing status file and exits 0), "transient:K:ID" (its first K runs
// write a transient_infra failure, which a node's max_retries retries).
type scriptHost struct {
	mu    sync.Mutex
	calls map[string]int
}

func (h *scriptHost) Exec(_ context.Context, req attractor.ExecRequest) (attractor.ExecResult, error) {
	for _, f := range []string{req.StdoutPath, req.StderrPath} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			return attractor.ExecResult{ExitCode: -1}, err
		}
	}
	cmd := req.Argv[len(req.Argv)-1]
	h.mu.Lock()
	h.calls[cmd]++
	n := h.calls[cmd]
	h.mu.Unlock()
	kind, rest, _ := strings.Cut(cmd, ":")
	k, _ := strconv.Atoi(strings.SplitN(rest, ":", 2)[0])
	status := func(s string) (attractor.ExecResult, error) {
		return attractor.ExecResult{}, os.WriteFile(req.StageEnv[attractor.EnvStatusPath], []byte(s), 0o644)
	}
	switch {
	case kind == "pass", kind == "flaky" && n > k, kind == "transient" && n > k:
		return attractor.ExecResult{}, nil
	case kind == "status":
		return status(`{"status":"fail","failure_reason":"3 tests failed"}`)
	case kind == "transient":
		return status(`{"status":"fail","failure_class":"transient_infra","failure_reason":"registry unavailable"}`)
	}
	return attractor.ExecResult{ExitCode: 1, StdoutTail: "x_test.go:1: want 1 got 2\n"}, nil
}

func (h *scriptHost) Checkpoint(_ context.Context, req attractor.CheckpointRequest) (string, error) {
	return "sha-" + req.Node.ID, nil
}

// forkingScriptHost is a scriptHost that runs parallel branches at once:
// every branch shares the scripts, and joins merge nothing.
type forkingScriptHost struct{ *scriptHost }

func (h forkingScriptHost) Fork(_ context.Context, req attractor.ForkRequest) (attractor.Branch, error) {
	return attractor.Branch{Host: h.scriptHost, Workspace: os.TempDir(), Ref: "ref/" + req.Head}, nil
}

func (h forkingScriptHost) Release(context.Context, attractor.Branch) error { return nil }

func (h forkingScriptHost) Join(context.Context, attractor.JoinRequest) (string, error) {
	return "merged", nil
}

// trace keeps the final attempts and the selected edges, in order.
type trace struct {
	attractor.NopListener
	mu     sync.Mutex
	events []traceEvent
}

type traceEvent struct {
	node, to string // to is set for an edge
	outcome  attractor.Outcome
	kind     attractor.Kind
}

func (tr *trace) AttemptFinished(_ context.Context, ev attractor.AttemptFinished) error {
	if ev.Final {
		tr.mu.Lock()
		tr.events = append(tr.events, traceEvent{node: ev.Node.ID, outcome: ev.Outcome, kind: ev.Node.Kind})
		tr.mu.Unlock()
	}
	return nil
}

func (tr *trace) EdgeSelected(_ context.Context, ev attractor.EdgeSelected) error {
	tr.mu.Lock()
	tr.events = append(tr.events, traceEvent{node: ev.From, to: ev.To})
	tr.mu.Unlock()
	return nil
}

// unhandled replays the trace and returns the verify nodes whose last
// attempt failed with no edge handling the failure. An edge handles the
// failures its source carries: its own, a fan-in's (the failures of the
// branches it joins, members), a diamond's (what the edge into it
// carried). An edge into a diamond hands the failure on rather than
// handling it; the parallel node's step to its fan-in is no edge at all.
func (tr *trace) unhandled(members map[string][]string, verify []string) []string {
	last := map[string]attractor.Outcome{}
	kind := map[string]attractor.Kind{}
	handled := map[string]bool{}
	carried := map[string][]string{} // diamond → failures handed to it
	failed := func(id string) bool {
		o, ok := last[id]
		return ok && o.Status == attractor.StatusFail && o.FailureClass != attractor.ClassCanceled
	}
	for _, ev := range tr.events {
		if ev.to == "" {
			last[ev.node], kind[ev.node], handled[ev.node] = ev.outcome, ev.kind, false
			continue
		}
		if !failed(ev.node) || kind[ev.node] == attractor.KindParallel {
			continue
		}
		carries := append([]string{ev.node}, carried[ev.node]...)
		for _, m := range members[ev.node] {
			if failed(m) {
				carries = append(carries, m)
			}
		}
		if strings.HasPrefix(ev.to, "d") { // the generator's diamonds
			carried[ev.to] = carries
			continue
		}
		for _, id := range carries {
			handled[id] = true
		}
	}
	var out []string
	for _, id := range verify {
		if failed(id) && !handled[id] {
			out = append(out, id)
		}
	}
	return out
}

// pipelineGen writes a random pipeline from a seed: start, one to four
// segments (a verify step or a fan-out of two or three branches), exit.
type pipelineGen struct {
	r       *rand.Rand
	b       strings.Builder
	n       int
	members map[string][]string // fan-in → the nodes of its branches
	verify  []string
}

// tail is an exit of a segment: an edge from id, with cond, leads on.
type tail struct{ id, cond string }

func newPipelineGen(seed uint64) *pipelineGen {
	return &pipelineGen{r: rand.New(rand.NewPCG(seed, 0x6b696c726f79)), members: map[string][]string{}}
}

func (g *pipelineGen) id(prefix string) string {
	g.n++
	return fmt.Sprintf("%s%d", prefix, g.n)
}

func (g *pipelineGen) line(format string, a ...any) { fmt.Fprintf(&g.b, format+"\n", a...) }

func (g *pipelineGen) pipeline() string {
	g.line("digraph gen {")
	g.line("start [shape=Mdiamond]; exit [shape=Msquare]")
	tails := []tail{{"start", ""}}
	for range 1 + g.r.IntN(4) {
		if g.r.IntN(3) == 0 {
			tails = g.verifyStep(tails, false)
		} else {
			tails = g.fan(tails)
		}
	}
	g.connect(tails, "exit")
	g.line("}")
	return g.b.String()
}

func (g *pipelineGen) connect(tails []tail, to string) {
	for _, t := range tails {
		if t.cond != "" {
			g.line("%s -> %s [condition=%q]", t.id, to, t.cond)
		} else {
			g.line("%s -> %s", t.id, to)
		}
	}
}

func (g *pipelineGen) script(id string) string {
	switch g.r.IntN(6) {
	case 0, 1:
		return "pass"
	case 2:
		return "fail"
	case 3:
		return fmt.Sprintf("flaky:%d:%s", 1+g.r.IntN(2), id)
	case 4:
		return "status"
	}
	return fmt.Sprintf("transient:%d:%s", 1+g.r.IntN(2), id)
}

// verifyStep adds a verify node after tails and how its failure is routed:
// not at all, a condition edge, a diamond with or without a fail edge, or
// (outside branches, where retry targets are not taken) a retry target.
func (g *pipelineGen) verifyStep(tails []tail, inBranch bool) []tail {
	v := g.id("v")
	g.verify = append(g.verify, v)
	attrs := fmt.Sprintf("shape=octagon, command=%q", g.script(v))
	if g.r.IntN(4) == 0 {
		attrs += ", max_retries=1"
	}
	if !inBranch && g.r.IntN(6) == 0 {
		attrs += ", goal_gate=true"
	}
	routes := 5
	if inBranch {
		routes = 4
	}
	route := g.r.IntN(routes)
	if route == 4 {
		attrs += ", retry_target=" + v
	}
	g.line("%s [%s]", v, attrs)
	g.connect(tails, v)
	return g.route(v, route)
}

// route routes the failure of node id as chosen and returns its tails.
func (g *pipelineGen) route(id string, route int) []tail {
	switch route {
	case 1:
		fix := g.fix()
		g.line("%s -> %s [condition=\"outcome=fail\"]", id, fix)
		return []tail{{id, ""}, {fix, ""}}
	case 2, 3:
		d := g.id("d")
		g.line("%s [shape=diamond]", d)
		g.line("%s -> %s", id, d)
		if route == 3 {
			return []tail{{d, "outcome=success"}}
		}
		fix := g.fix()
		g.line("%s -> %s [condition=\"outcome=fail\"]", d, fix)
		return []tail{{d, "outcome=success"}, {fix, ""}}
	}
	return []tail{{id, ""}}
}

func (g *pipelineGen) fix() string {
	fix := g.id("fix")
	g.line("%s [shape=parallelogram, tool_command=\"pass\"]", fix)
	return fix
}

// fan adds a parallel node under a random join rule, its branches of one
// or two verify steps, its fan-in, and a route for the fan-in's failure.
func (g *pipelineGen) fan(tails []tail) []tail {
	fan, join := g.id("fan"), g.id("join")
	attrs := []string{"", `, join_policy="wait_all"`, `, join_policy="first_success"`, `, allow_partial=true`}[g.r.IntN(4)]
	route := g.r.IntN(5)
	if route == 4 {
		attrs += ", retry_target=" + fan
	}
	g.line("%s [shape=component%s]", fan, attrs)
	g.line("%s [shape=tripleoctagon]", join)
	g.connect(tails, fan)
	start := len(g.verify)
	for range 2 + g.r.IntN(2) {
		bt := []tail{{fan, ""}}
		for range 1 + g.r.IntN(2) {
			bt = g.verifyStep(bt, true)
		}
		g.connect(bt, join)
	}
	g.members[join] = slices.Clone(g.verify[start:])
	return g.route(join, route)
}
