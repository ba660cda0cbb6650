package runpage_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/runpage"
)

// claudeLines is Claude Code's stream-json as an agent node writes it,
// and apiLines the API loop's transcript.jsonl.
var (
	claudeLines = []string{
		`{"type":"system","subtype":"init","session_id":"s1"}`,
		`{"type":"assistant","message":{"content":[{"type":"text","text":"I will fix the test."},{"type":"tool_use","name":"Bash","input":{"command":"go test ./..."}}]}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","content":"--- FAIL: TestX"}]}}`,
		`{"type":"result","subtype":"success","result":"Fixed TestX."}`,
	}
	apiLines = []string{
		`{"time":"2025-01-01T00:00:00Z","kind":"start","model":"claude-x","prompt":"fix it"}`,
		`{"time":"2025-01-01T00:00:01Z","kind":"assistant","turn":1,"text":"Reading main.go","tool_calls":[{"ID":"c1","Name":"read_file","Input":{"path":"main.go"}}]}`,
		`{"time":"2025-01-01T00:00:02Z","kind":"tool_result","call_id":"c1","tool":"read_file","content":"package main"}`,
	}
)

// TestTranscriptText: every message, tool call and tool answer of both
// formats is in the text, bookkeeping events are not, and a line that is
// not JSON is kept.
func TestTranscriptText(t *testing.T) {
	got := runpage.TranscriptText([]byte(strings.Join(append(append(claudeLines, "plain output line"), apiLines...), "\n")))
	for _, want := range []string{"I will fix the test.", "Bash", "go test ./...", "--- FAIL: TestX", "Fixed TestX.",
		"claude-x", "Reading main.go", "read_file", `"path":"main.go"`, "package main", "plain output line"} {
		if !strings.Contains(got, want) {
			t.Errorf("transcript text lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "session_id") || strings.Contains(got, "{") && strings.Contains(got, `"type"`) {
		t.Errorf("transcript text shows raw events:\n%s", got)
	}
}

// TestLoadShowsTranscript: a running agent node's transcript is among its
// logs, readable and redacted.
func TestLoadShowsTranscript(t *testing.T) {
	runsDir, f := newRun(t)
	writeFullRun(f)
	f.write("nodes/lint/agent.stdout.jsonl", strings.Join(claudeLines, "\n")+"\n"+
		`{"type":"assistant","message":{"content":[{"type":"text","text":"the token is `+token+`"}]}}`+"\n")
	run, err := newPages(t, runsDir, runpage.Options{}).Load(runID)
	if err != nil {
		t.Fatal(err)
	}
	var text string
	for _, n := range run.Nodes {
		for _, l := range n.Logs {
			if n.ID == "lint" && l.Name == "agent.stdout.jsonl (readable)" {
				text = l.Text
			}
		}
	}
	if !strings.Contains(text, "I will fix the test.") || !strings.Contains(text, "go test ./...") {
		t.Errorf("lint's readable transcript: %q", text)
	}
	if strings.Contains(text, token) {
		t.Errorf("the transcript shows a token: %q", text)
	}
}

// sseEvent is one event read from a stream.
type sseEvent struct{ name, data string }

func readEvents(t *testing.T, body *bufio.Scanner, out chan<- sseEvent) {
	defer close(out)
	name := ""
	for body.Scan() {
		line := body.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			out <- sseEvent{name, strings.TrimPrefix(line, "data: ")}
		}
	}
}

// TestStreamFollowsTheRun: the stream of a running run sends a node's log
// each time it grows, redacted, says when the run's state changes, and
// ends when the run does.
func TestStreamFollowsTheRun(t *testing.T) {
	runsDir, f := newRun(t)
	writeFullRun(f)
	p := newPages(t, runsDir, runpage.Options{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := p.Stream(r.Context(), w, runID, "", 10*time.Millisecond); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("Content-Type %q", ct)
	}
	events := make(chan sseEvent, 100)
	go readEvents(t, bufio.NewScanner(resp.Body), events)
	lintLog := runpage.LogID("lint", "stdout.log")
	next := func(want func(sseEvent) bool, what string) sseEvent {
		t.Helper()
		for {
			select {
			case ev, ok := <-events:
				if !ok {
					t.Fatalf("the stream ended before %s", what)
				}
				if want(ev) {
					return ev
				}
			case <-ctx.Done():
				t.Fatalf("no %s", what)
			}
		}
	}
	lintText := func(ev sseEvent) string {
		var l struct{ ID, Text string }
		if ev.name != "log" || json.Unmarshal([]byte(ev.data), &l) != nil || l.ID != lintLog {
			return ""
		}
		return l.Text
	}
	appendLog := func(s string) {
		fh, err := os.OpenFile(filepath.Join(runsDir, runID, "nodes/lint/stdout.log"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		if _, err := fh.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}

	appendLog("step 1\n")
	next(func(ev sseEvent) bool { return lintText(ev) == "step 1\n" }, "log event with step 1")
	appendLog("step 2 with " + token + "\n")
	ev := next(func(ev sseEvent) bool { return strings.Contains(lintText(ev), "step 2") }, "log event with step 2")
	if got := lintText(ev); !strings.HasPrefix(got, "step 1\nstep 2") || strings.Contains(got, token) {
		t.Errorf("second log event %q: want the whole log so far, redacted", got)
	}
	f.write("progress.ndjson", mustRead(t, filepath.Join(runsDir, runID, "progress.ndjson"))+
		`{"time":"2025-01-02T03:05:00Z","type":"run_finished","run_id":"`+runID+`","status":"fail","reason":"test failed"}`+"\n")
	next(func(ev sseEvent) bool { return ev.name == "state" }, "state event")
	next(func(ev sseEvent) bool { return ev.name == "end" }, "end event")
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestStreamsShareLooks: twenty readers of one running run read its
// directory about once per interval between them, not once each, and
// every one of them still gets a log line written while they watch.
func TestStreamsShareLooks(t *testing.T) {
	runsDir, f := newRun(t)
	writeFullRun(f)
	const viewers, every, watch = 20, 50 * time.Millisecond, 1200 * time.Millisecond
	var loads atomic.Int64         // Source is called once per Load
	started := make(chan struct{}) // closed at the viewers' first looks
	p := newPages(t, runsDir, runpage.Options{Source: func(string) runpage.Source {
		if loads.Add(1) == viewers {
			close(started)
		}
		return runpage.Source{}
	}})
	ctx, cancel := context.WithTimeout(t.Context(), watch)
	defer cancel()
	recs := make([]*httptest.ResponseRecorder, viewers)
	var wg sync.WaitGroup
	for i := range recs {
		recs[i] = httptest.NewRecorder()
		wg.Go(func() { _ = p.Stream(ctx, recs[i], runID, "", every) })
	}
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatalf("the %d streams had not all made their first look within %v", viewers, watch)
	}
	fh, err := os.OpenFile(filepath.Join(runsDir, runID, "nodes/lint/stdout.log"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fh.WriteString("seen by all\n"); err != nil {
		t.Fatal(err)
	}
	fh.Close()
	wg.Wait()
	for i, rec := range recs {
		if !strings.Contains(rec.Body.String(), "seen by all") {
			t.Errorf("viewer %d did not get the new log line:\n%s", i, rec.Body.String())
		}
	}
	// Each stream's first look is its own; after that, one look per
	// interval at most, with slack for a slow machine's timers.
	looks := loads.Load() - viewers
	if limit := int64(2*watch/every) + 4; looks > limit {
		t.Errorf("%d viewers made %d looks in %v at every %v: want at most %d (one per interval, shared)", viewers, looks, watch, every, limit)
	}
	t.Logf("%d viewers: %d looks after their first in %v at every %v", viewers, looks, watch, every)
}
