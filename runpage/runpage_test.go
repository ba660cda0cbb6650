package runpage_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/checks"
	"github.com/kilroy-bot/kilroy-bot/runpage"
)

const (
	runID = "01J9Z8Q4M6V3N5R7T9W1X3Y5Z7"
	token = "ghs_0123456789abcdefghijABCDEFGHIJ0123"
	sha1  = "1111111111111111111111111111111111111111"
	sha2  = "2222222222222222222222222222222222222222"
)

// runFiles builds a run directory file by file.
type runFiles struct {
	t   *testing.T
	dir string
}

func newRun(t *testing.T) (runsDir string, f runFiles) {
	t.Helper()
	runsDir = t.TempDir()
	return runsDir, runFiles{t: t, dir: filepath.Join(runsDir, runID)}
}

func (f runFiles) write(name, content string) {
	f.t.Helper()
	p := filepath.Join(f.dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f runFiles) json(name string, v any) {
	f.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		f.t.Fatal(err)
	}
	f.write(name, string(b))
}

// progress writes progress.ndjson from maps, one per line.
func (f runFiles) progress(events ...map[string]any) {
	f.t.Helper()
	var b strings.Builder
	for _, ev := range events {
		line, err := json.Marshal(ev)
		if err != nil {
			f.t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	f.write("progress.ndjson", b.String())
}

func newPages(t *testing.T, runsDir string, opts runpage.Options) *runpage.Pages {
	t.Helper()
	opts.RunsDir = runsDir
	if opts.Keys == nil {
		opts.Keys = newKeys(t, "current-webhook-secret")
	}
	p, err := runpage.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// writeFullRun writes a run of three nodes: build succeeded, test failed
// after a retry, lint is running; the checkpoint is after test.
func writeFullRun(f runFiles) {
	f.json("checkpoint.json", map[string]any{
		"version": 1, "run_id": runID, "pipeline": "ci", "branch": "kilroy/run/ci/" + runID,
		"base_sha": sha1, "commit_sha": sha2, "updated_at": "2025-01-02T03:04:10Z",
		"state": attractor.State{
			RunID: runID, Completed: []string{"build", "test"},
			Outcomes: map[string]attractor.Outcome{
				"build": {Status: attractor.StatusSuccess},
				"test":  {Status: attractor.StatusFail, FailureReason: "exit status 1"},
			},
		},
	})
	f.progress(
		map[string]any{"time": "2025-01-02T03:04:00Z", "type": "run_started", "run_id": runID, "pipeline": "ci", "branch": "kilroy/run/ci/" + runID, "base_sha": sha1},
		map[string]any{"time": "2025-01-02T03:04:01Z", "type": "node_started", "run_id": runID, "node": "build"},
		map[string]any{"time": "2025-01-02T03:04:03Z", "type": "node_finished", "run_id": runID, "node": "build", "attempt": 1, "status": "success", "duration_ms": 2000},
		map[string]any{"time": "2025-01-02T03:04:04Z", "type": "checkpoint", "run_id": runID, "node": "build", "status": "success", "sha": sha1},
		map[string]any{"time": "2025-01-02T03:04:04Z", "type": "node_started", "run_id": runID, "node": "test"},
		map[string]any{"time": "2025-01-02T03:04:05Z", "type": "attempt_finished", "run_id": runID, "node": "test", "attempt": 1, "status": "fail", "failure_class": "transient_infra", "reason": "flaky", "duration_ms": 1000},
		map[string]any{"time": "2025-01-02T03:04:08Z", "type": "node_finished", "run_id": runID, "node": "test", "attempt": 2, "status": "fail", "reason": "exit status 1 with " + token, "duration_ms": 1500},
		map[string]any{"time": "2025-01-02T03:04:09Z", "type": "checkpoint", "run_id": runID, "node": "test", "status": "fail", "sha": sha2},
		map[string]any{"time": "2025-01-02T03:04:09Z", "type": "node_started", "run_id": runID, "node": "lint"},
	)
	f.write("report.md", "## kilroy/ci\n<b>bold</b> & co\n")
	f.write("nodes/build/status.json", `{"status":"success"}`)
	f.write("nodes/build/stdout.log", "ok\n")
	f.write("nodes/test/status.json", `{"status":"fail"}`)
	f.write("nodes/test/stdout.log", "--- FAIL: TestX\nGITHUB_TOKEN="+token+"\n")
	f.write("nodes/test/stderr.log", "exact secret: my-webhook-secret\n")
	f.write("nodes/test/verify.stdout.log", "main.go:3: unused\n")
	f.write("nodes/lint/stdout.log", "")
}

func TestLoad(t *testing.T) {
	runsDir, f := newRun(t)
	writeFullRun(f)
	p := newPages(t, runsDir, runpage.Options{
		Redactor:  checks.NewRedactor("my-webhook-secret"),
		CommitURL: func(id, sha string) string { return "https://github.com/o/r/commit/" + sha + "?run=" + id },
	})
	run, err := p.Load(runID)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		ID, Status, Reason string
		Attempts           int
		Duration           time.Duration
		Commit             string
		Logs               []string
	}
	var got []row
	for _, n := range run.Nodes {
		r := row{ID: n.ID, Status: n.Status, Reason: n.Reason, Attempts: n.Attempts, Duration: n.Duration, Commit: n.Commit.URL}
		for _, l := range n.Logs {
			r.Logs = append(r.Logs, l.Name+": "+l.Text)
		}
		got = append(got, r)
	}
	want := []row{
		{ID: "build", Status: "success", Attempts: 1, Duration: 2 * time.Second,
			Commit: "https://github.com/o/r/commit/" + sha1 + "?run=" + runID, Logs: []string{"stdout.log: ok\n"}},
		{ID: "test", Status: "fail", Reason: "exit status 1 with [REDACTED]", Attempts: 2, Duration: 2500 * time.Millisecond,
			Commit: "https://github.com/o/r/commit/" + sha2 + "?run=" + runID, Logs: []string{
				"stdout.log: --- FAIL: TestX\nGITHUB_TOKEN=[REDACTED]\n",
				"stderr.log: exact secret: [REDACTED]\n",
				"verify.stdout.log: main.go:3: unused\n",
			}},
		{ID: "lint", Status: "running", Logs: []string{"stdout.log: "}},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("nodes (-got +want):\n%s", diff)
	}
	if run.Status != "running" || run.Pipeline != "ci" || run.Commit.SHA != sha2 || len(run.Events) != 9 || len(run.Problems) != 0 {
		t.Errorf("run = status %q pipeline %q commit %q, %d events, problems %q", run.Status, run.Pipeline, run.Commit.SHA, len(run.Events), run.Problems)
	}
}

func TestRender(t *testing.T) {
	runsDir, f := newRun(t)
	writeFullRun(f)
	f.progress(map[string]any{"type": "run_finished", "run_id": runID, "status": "fail", "reason": "node test failed"})
	p := newPages(t, runsDir, runpage.Options{
		Redactor:  checks.NewRedactor("my-webhook-secret"),
		CommitURL: func(_, sha string) string { return "javascript:alert(1)//" + sha },
	})
	run, err := p.Load(runID)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := p.Render(&buf, run); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{"node test failed", "&lt;b&gt;bold&lt;/b&gt; &amp; co", "#ZgotmplZ", "[REDACTED]", "<code>test</code>"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, leak := range []string{token, "my-webhook-secret", "<b>bold", "javascript:", "<script"} {
		if strings.Contains(page, leak) {
			t.Errorf("page contains %q", leak)
		}
	}
}

// The page shows the node table and the failure once: the check run's
// report, which has both, is folded away, and the failed node's row does
// not repeat the run's reason.
func TestRenderSaysThingsOnce(t *testing.T) {
	runsDir, f := newRun(t)
	const reason = "verify command exited with status 1: main.go:3: unused"
	f.progress(
		map[string]any{"time": "2025-01-02T03:04:00Z", "type": "run_started", "run_id": runID, "pipeline": "ci", "branch": "kilroy/run/ci/" + runID, "base_sha": sha1},
		map[string]any{"time": "2025-01-02T03:04:01Z", "type": "node_started", "run_id": runID, "node": "build"},
		map[string]any{"time": "2025-01-02T03:04:03Z", "type": "node_finished", "run_id": runID, "node": "build", "attempt": 1, "status": "fail", "reason": "a reason of its own", "duration_ms": 2000},
		map[string]any{"time": "2025-01-02T03:04:04Z", "type": "node_started", "run_id": runID, "node": "lint"},
		map[string]any{"time": "2025-01-02T03:04:10Z", "type": "node_finished", "run_id": runID, "node": "lint", "attempt": 1, "status": "fail", "reason": reason, "duration_ms": 10},
		map[string]any{"type": "run_finished", "run_id": runID, "status": "fail", "reason": "node lint failed: " + reason})
	f.write("report.md", "# kilroy/ci\n\n| Node | Status |\n|---|---|\n| `lint` | failed |\n\n"+reason+"\n")
	p := newPages(t, runsDir, runpage.Options{})
	run, err := p.Load(runID)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := p.Render(&buf, run); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if !strings.Contains(page, "<details><summary>The check run's report") {
		t.Fatalf("the report is not folded away:\n%s", page)
	}
	// What shows before anything is unfolded.
	shown := page
	for {
		i := strings.Index(shown, "<details")
		if i < 0 {
			break
		}
		j := strings.Index(shown[i:], "</details>")
		if j < 0 {
			t.Fatalf("unclosed <details>:\n%s", page)
		}
		shown = shown[:i] + shown[i+j+len("</details>"):]
	}
	if n := strings.Count(shown, "<th>Node</th>"); n != 1 {
		t.Errorf("%d node tables shown, want 1:\n%s", n, shown)
	}
	if n := strings.Count(shown, reason); n != 1 {
		t.Errorf("the failure %q shows %d times, want once:\n%s", reason, n, shown)
	}
	if !strings.Contains(shown, "<td>a reason of its own</td>") {
		t.Errorf("a node reason the run's reason does not hold is gone:\n%s", shown)
	}
}

// TestLogTail: a long log shows only its end, and a token that straddles
// where the tail starts is redacted whole, not shown in part.
func TestLogTail(t *testing.T) {
	runsDir, f := newRun(t)
	const tailLen = 1024
	before := strings.Repeat("x", 50_000) + "\nGITHUB_TOKEN="
	// The token starts 10 bytes before the last tailLen bytes.
	after := "\n" + strings.Repeat("y", tailLen-len(token)+9)
	f.write("nodes/build/stdout.log", before+token+after)
	p := newPages(t, runsDir, runpage.Options{LogTail: tailLen})
	run, err := p.Load(runID)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Nodes) != 1 || len(run.Nodes[0].Logs) != 1 {
		t.Fatalf("nodes = %+v, want one with one log", run.Nodes)
	}
	l := run.Nodes[0].Logs[0]
	if len(l.Text) > tailLen || l.Omitted < 45_000 || !strings.HasSuffix(l.Text, after) {
		t.Errorf("log tail: %d bytes shown, %d omitted; want at most %d, the end, and the start counted", len(l.Text), l.Omitted, tailLen)
	}
	if tokenTail := token[10:]; strings.Contains(l.Text, tokenTail) {
		t.Errorf("log tail shows part of the token: %q", l.Text[:60])
	}
}

func TestLoadErrors(t *testing.T) {
	runsDir, f := newRun(t)
	f.write("checkpoint.json", "{}")
	if err := os.WriteFile(filepath.Join(runsDir, "01J9Z8Q4M6V3N5R7T9W1X3Y5Z8"), []byte("a file"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := newPages(t, runsDir, runpage.Options{})
	tests := []struct {
		id   string
		want error
	}{
		{"01J9Z8Q4M6V3N5R7T9W1X3Y5Z9", runpage.ErrNotFound},
		{"01J9Z8Q4M6V3N5R7T9W1X3Y5Z8", runpage.ErrNotFound}, // not a directory
		{"../etc", runpage.ErrInvalidID},
		{"..", runpage.ErrInvalidID},
		{"", runpage.ErrInvalidID},
		{"01J9Z8Q4M6V3N5R7T9W1X3Y5/7", runpage.ErrInvalidID},
		{"01j9z8q4m6v3n5r7t9w1x3y5z7", runpage.ErrInvalidID},
		{"81J9Z8Q4M6V3N5R7T9W1X3Y5Z7", runpage.ErrInvalidID}, // overflows 128 bits
		{"01J9Z8Q4M6V3N5R7T9W1X3Y5ZI", runpage.ErrInvalidID}, // I is not base32
	}
	for _, tt := range tests {
		if _, err := p.Load(tt.id); !errors.Is(err, tt.want) {
			t.Errorf("Load(%q) = %v, want %v", tt.id, err, tt.want)
		}
	}
}

// TestLoadTolerates: a run that has not checkpointed, broken lines and a
// link out of the run still render, with the problems listed.
func TestLoadTolerates(t *testing.T) {
	runsDir, f := newRun(t)
	f.write("checkpoint.json", "{not json")
	f.write("progress.ndjson", `{"type":"node_started","node":"a"}`+"\n"+`{"type":"node_fin`)
	outside := filepath.Join(t.TempDir(), "passwd")
	if err := os.WriteFile(outside, []byte("root:x:0:0"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.write("nodes/a/stdout.log", "fine\n")
	if err := os.Symlink(outside, filepath.Join(f.dir, "nodes", "a", "stderr.log")); err != nil {
		t.Skipf("symlinks: %v", err)
	}
	p := newPages(t, runsDir, runpage.Options{})
	run, err := p.Load(runID)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := p.Render(&buf, run); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "root:x") {
		t.Error("page shows a file outside the run through a symbolic link")
	}
	problems := strings.Join(run.Problems, "\n")
	for _, want := range []string{"checkpoint.json", "1 unreadable lines"} {
		if !strings.Contains(problems, want) {
			t.Errorf("problems %q lack %q", problems, want)
		}
	}
	if len(run.Nodes) != 1 || run.Nodes[0].Status != "running" || len(run.Nodes[0].Logs) != 1 {
		t.Errorf("nodes = %+v, want a running with its stdout only", run.Nodes)
	}
}

func TestValidID(t *testing.T) {
	for id, want := range map[string]bool{
		runID:                         true,
		"7ZZZZZZZZZZZZZZZZZZZZZZZZZ":  true,
		"01J9Z8Q4M6V3N5R7T9W1X3Y5Z":   false,
		"01J9Z8Q4M6V3N5R7T9W1X3Y5Z7A": false,
		"01J9Z8Q4M6V3N5R7T9W1X3Y5ZU":  false,
		"01J9Z8Q4M6V3N5R7T9W1X3Y5Z.":  false,
	} {
		if got := runpage.ValidID(id); got != want {
			t.Errorf("ValidID(%q) = %v, want %v", id, got, want)
		}
	}
}

// TestRenderRunPage: the page links what the run tested, labels its
// nodes, says its total time, reloads itself only while the run goes,
// renders the report and folds empty logs and engine events.
func TestRenderRunPage(t *testing.T) {
	finished := map[string]any{"time": "2025-01-02T03:04:30Z", "type": "run_finished", "run_id": runID, "status": "fail", "reason": "node test failed"}
	tests := []struct {
		name    string
		events  []map[string]any
		want    []string
		notWant []string
	}{
		{
			name:    "running",
			want:    []string{`<meta http-equiv="refresh" content="10">`, "reloads every 10 s", "<th>Time so far</th><td>1m40s</td>"},
			notWant: []string{"Total time"},
		},
		{
			name:    "finished",
			events:  []map[string]any{finished},
			want:    []string{"<th>Total time</th><td>30s</td>"},
			notWant: []string{"http-equiv", "reloads every", "Time so far"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runsDir, f := newRun(t)
			writeFullRun(f)
			f.write("graph.dot", `digraph ci { start [shape=Mdiamond]; build [shape=parallelogram, tool_command="make", label="Build <all>"]; test [shape=parallelogram, tool_command="go test"]; lint [shape=parallelogram, tool_command="lint"]; done [shape=Msquare]; start -> build -> test -> lint -> done }`)
			f.write("report.md", "# kilroy/ci: 1 of 3 nodes passed\n\n| Node | Status |\n|---|---|\n| `build` Build | ✅ success |\n\n```mermaid\nflowchart TD\n```\n")
			if tt.events != nil {
				data, err := os.ReadFile(filepath.Join(f.dir, "progress.ndjson"))
				if err != nil {
					t.Fatal(err)
				}
				line, _ := json.Marshal(tt.events[0])
				f.write("progress.ndjson", string(data)+string(line)+"\n")
			}
			p := newPages(t, runsDir, runpage.Options{
				Now: func() time.Time { return time.Date(2025, 1, 2, 3, 5, 40, 0, time.UTC) },
				Source: func(id string) runpage.Source {
					return runpage.Source{Repo: "o/r", RepoURL: "https://github.com/o/r", PR: 7, PRURL: "https://github.com/o/r/pull/7",
						HeadSHA: sha2, HeadURL: "https://github.com/o/r/commit/" + sha2}
				},
			})
			run, err := p.Load(runID)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := p.Render(&buf, run); err != nil {
				t.Fatal(err)
			}
			page := buf.String()
			want := append([]string{
				`<a href="https://github.com/o/r">o/r</a>`,
				`<a href="https://github.com/o/r/pull/7">#7</a>`,
				`<a href="https://github.com/o/r/commit/` + sha2 + `"><code>2222222</code></a>`,
				`<code>build</code></a> Build &lt;all&gt;</td>`,
				"<h2>kilroy/ci: 1 of 3 nodes passed</h2>", "<th>Node</th><th>Status</th>", "<summary>Flowchart (Mermaid source)</summary>",
				"<p class=\"muted\">Empty: <code>stdout.log</code></p>",
				"<details><summary>", " engine events</summary>",
			}, tt.want...)
			for _, w := range want {
				if !strings.Contains(page, w) {
					t.Errorf("page lacks %q", w)
				}
			}
			for _, w := range append([]string{"|---|", "<pre></pre>", "```"}, tt.notWant...) {
				if strings.Contains(page, w) {
					t.Errorf("page has %q", w)
				}
			}
		})
	}
}

// A run whose files say it is going is shown interrupted, with its
// running node, when it is not active (its process died); a finished run,
// or one whose activity is unknown, keeps its status.
func TestInterruptedRun(t *testing.T) {
	tests := []struct {
		name           string
		finished       bool
		active         func(string) bool
		status, node   string
		live, saysStop bool
	}{
		{"no activity known", false, nil, "running", "running", true, false},
		{"active", false, func(string) bool { return true }, "running", "running", true, false},
		{"not active", false, func(string) bool { return false }, runpage.Interrupted, runpage.Interrupted, false, true},
		{"finished, not active", true, func(string) bool { return false }, "fail", "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runsDir, f := newRun(t)
			writeFullRun(f)
			if tt.finished {
				f.progress(map[string]any{"type": "run_finished", "run_id": runID, "status": "fail", "reason": "node test failed"})
			}
			var asked []string
			active := tt.active
			if active != nil {
				active = func(id string) bool { asked = append(asked, id); return tt.active(id) }
			}
			p := newPages(t, runsDir, runpage.Options{Active: active})
			run, err := p.Load(runID)
			if err != nil {
				t.Fatal(err)
			}
			var page bytes.Buffer
			if err := p.Render(&page, run); err != nil {
				t.Fatal(err)
			}
			lint := ""
			for _, n := range run.Nodes {
				if n.ID == "lint" {
					lint = n.Status
				}
			}
			type view struct {
				Status, Node   string
				Live, SaysStop bool
			}
			got := view{run.Status, lint, run.Live(), strings.Contains(page.String(), "the process running it stopped")}
			want := view{tt.status, tt.node, tt.live, tt.saysStop}
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("run (-got +want):\n%s", diff)
			}
			if active != nil && !tt.finished && !cmp.Equal(asked, []string{runID}) {
				t.Errorf("Active asked about %q, want %q", asked, runID)
			}
		})
	}
}
