package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/checks"
	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
	"github.com/kilroy-bot/kilroy-bot/runner/agent/agenttest"
)

// tickingDOT is a pipeline whose build node runs for n×step seconds,
// printing "tick i" (in colour, as tools that force it do) every step.
func tickingDOT(n int, step string) string {
	return fmt.Sprintf(`digraph ci {
  start [shape=Mdiamond]
  build [shape=parallelogram, tool_command="for i in $(seq 1 %d); do printf '\033[1;32mtick %%s\033[0m\n' $i; sleep %s; done"]
  done [shape=Msquare]
  start -> build -> done
}
`, n, step)
}

// progressPatches are the updates of a check that change nothing but its
// progress: in_progress after in_progress. Status changes (going
// in_progress, completing) are never held back and are not counted.
func progressPatches(ps []ghapptest.CheckRunRequest) []ghapptest.CheckRunRequest {
	var out []ghapptest.CheckRunRequest
	for i := 1; i < len(ps); i++ {
		if ps[i].Status == checks.StatusInProgress && ps[i-1].Status == checks.StatusInProgress {
			out = append(out, ps[i])
		}
	}
	return out
}

// sendSlack is what a request may lose between the bot's clock, which
// spaces the sends, and its arrival at the fake, which stamps it: the
// loopback connection's latency, far below any interval tested.
const sendSlack = 100 * time.Millisecond

// assertSpaced fails for two progress updates of one check closer than
// every (less sendSlack), and for any update after the completion.
func assertSpaced(t *testing.T, name string, ps []ghapptest.CheckRunRequest, every time.Duration) {
	t.Helper()
	prog := progressPatches(ps)
	for i := 1; i < len(prog); i++ {
		if gap := prog[i].At.Sub(prog[i-1].At); gap < every-sendSlack {
			t.Errorf("%s: progress updates %v apart (%q, %q), want at most one per %v", name, gap, prog[i-1].Title, prog[i].Title, every)
		}
	}
	for i, p := range ps {
		if p.Status == checks.StatusCompleted && i != len(ps)-1 {
			t.Errorf("%s: update %q after the completion", name, ps[len(ps)-1].Title)
		}
	}
}

var elapsedTitle = regexp.MustCompile(`running build \(([0-9ms]+)\)`)

// TestServeE2ELiveProgress60s runs a node for 60 s through serve at the
// real interval (10 s): the summary check shows the running node's
// elapsed time and output tail at least four times, never two progress
// updates within 10 s, the completion last; the run page streams the
// node's log as it grows, and reads without JavaScript.
func TestServeE2ELiveProgress60s(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a node for a minute")
	}
	e := newE2E(t, e2eOptions{files: map[string]string{"main.go": mainGo, ".kilroy/ci.dot": tickingDOT(12, "5")}})
	sha := e.repo.Commit(t, "feature-1", map[string]string{"README.md": "change\n"}, "change")
	e.deliver("pull_request", e.openPR("opened", pr{number: 1, sha: sha}))
	e.waitNode(sha, "build")
	sum := e.named(sha, "kilroy/ci")[0]
	page := strings.Replace(sum.DetailsURL, publicURL, e.base, 1)
	assertStreams(t, e, page)

	deadline := time.Now().Add(3 * time.Minute)
	for !allCompleted(e.checkRuns(sha)) {
		if time.Now().After(deadline) {
			t.Fatalf("the run did not end within 3 minutes:\n%s", e.describeChecks())
		}
		time.Sleep(200 * time.Millisecond)
	}
	sum = e.named(sha, "kilroy/ci")[0]
	if sum.Conclusion != "success" {
		t.Fatalf("kilroy/ci %s, want success:\n%s", sum.Conclusion, e.describeChecks())
	}
	ps := sum.Patches()
	assertSpaced(t, "kilroy/ci", ps, checks.DefaultThrottle)
	var shown []string
	for _, p := range progressPatches(ps) {
		m := elapsedTitle.FindStringSubmatch(p.Title)
		if m == nil {
			continue
		}
		if !strings.Contains(p.Summary, "tick ") || strings.ContainsRune(p.Summary, 0x1b) {
			t.Errorf("update %q: summary without the cleaned output tail:\n%s", p.Title, p.Summary)
		}
		shown = append(shown, m[1])
	}
	if len(shown) < 4 {
		t.Errorf("the summary showed the running build %d times (%v), want at least 4 in its 60 s", len(shown), shown)
	}
	for i := 1; i < len(shown); i++ {
		if shown[i] == shown[i-1] {
			t.Errorf("elapsed time %s shown twice: %v", shown[i], shown)
		}
	}
	t.Logf("summary updates while build ran: %v", shown)
}

// assertStreams reads the run page without JavaScript (the log is in the
// page, which reloads from a <noscript>) and its event stream, which must
// send the build's log again as it grows.
func assertStreams(t *testing.T, e *e2e, page string) {
	t.Helper()
	code, body := e.get(strings.TrimPrefix(page, e.base))
	if code != http.StatusOK {
		t.Fatalf("run page: %d %s", code, body)
	}
	for _, want := range []string{`<noscript><meta http-equiv="refresh"`, `data-live="/runs/`, `<script src="/assets/runpage-live.js"`} {
		if !strings.Contains(body, want) {
			t.Errorf("running run's page lacks %q", want)
		}
	}
	if code, js := e.get("/assets/runpage-live.js"); code != http.StatusOK || !strings.Contains(js, "EventSource") {
		t.Errorf("live.js: %d, %d bytes", code, len(js))
	}
	u, err := url.Parse(page)
	if err != nil {
		t.Fatal(err)
	}
	stream := e.base + u.Path + "/live?" + u.RawQuery
	if code, _ := e.get(u.Path + "/live"); code != http.StatusNotFound {
		t.Errorf("the stream without its token: %d, want 404", code)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, stream, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("stream: %d %s", resp.StatusCode, ct)
	}
	// Two log events of stdout.log, the second with ticks the first did
	// not have: the log as it grows, without a reload.
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var texts []string
	event := ""
	for sc.Scan() && len(texts) < 2 {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: ") && event == "log":
			var l struct{ ID, Text string }
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &l); err != nil {
				t.Fatalf("log event %q: %v", line, err)
			}
			if strings.HasSuffix(l.ID, "stdout.log") && strings.Contains(l.Text, "tick ") {
				if strings.ContainsRune(l.Text, 0x1b) {
					t.Errorf("streamed log carries escape sequences: %q", l.Text)
				}
				texts = append(texts, l.Text)
			}
		}
	}
	if len(texts) < 2 {
		t.Fatalf("the stream sent %d versions of the build's log, want it twice as it grows (err %v)", len(texts), sc.Err())
	}
	if !strings.HasPrefix(texts[1], texts[0]) || len(texts[1]) <= len(texts[0]) {
		t.Errorf("the second log event does not extend the first:\n%q\n%q", texts[0], texts[1])
	}
}

// TestServeE2ELiveProgressRateLimited shortens the interval (the internal
// hook) and has GitHub answer a progress update with a secondary rate
// limit (429, Retry-After): no request updates the check until the wait
// is over, progress resumes with the latest state, and the completion is
// last.
func TestServeE2ELiveProgressRateLimited(t *testing.T) {
	e := newE2E(t, e2eOptions{deferStart: true,
		files: map[string]string{"main.go": mainGo, ".kilroy/ci.dot": tickingDOT(16, "0.5")}})
	const every = time.Second
	e.cfg.ProgressEvery = every
	e.start()
	sha := e.repo.Commit(t, "feature-1", map[string]string{"README.md": "change\n"}, "change")
	e.deliver("pull_request", e.openPR("opened", pr{number: 1, sha: sha}))
	e.waitFor("a progress update of the running build", func() bool {
		runs := e.named(sha, "kilroy/ci")
		return len(runs) > 0 && len(progressPatches(runs[0].Patches())) > 0
	})
	sum := e.named(sha, "kilroy/ci")[0]
	path := fmt.Sprintf("/api/v3/repos/%s/check-runs/%d", e2eRepo, sum.ID)
	e.gh.FailNext("PATCH", path, 1, http.StatusTooManyRequests, map[string]string{"Retry-After": "3"})
	var limitedAt time.Time
	e.waitFor("the rate-limited update", func() bool {
		for _, r := range e.gh.Requests() {
			if r.Path == path && r.Status == http.StatusTooManyRequests {
				limitedAt = r.At
				return true
			}
		}
		return false
	})
	e.waitSettled(sha, "kilroy/ci")
	sum = e.named(sha, "kilroy/ci")[0]
	if sum.Conclusion != "success" {
		t.Fatalf("kilroy/ci %s, want success", sum.Conclusion)
	}
	ps := sum.Patches()
	var after []ghapptest.CheckRunRequest
	for _, p := range ps {
		if p.At.After(limitedAt) {
			after = append(after, p)
		}
	}
	if len(after) == 0 {
		t.Fatal("no update after the rate limit")
	}
	if gap := after[0].At.Sub(limitedAt); gap < 3*time.Second-sendSlack {
		t.Errorf("the check was updated %v after a 429 with Retry-After: 3", gap)
	}
	if len(progressPatches(after)) == 0 && after[0].Status != checks.StatusCompleted {
		t.Errorf("no progress after the rate limit: %v", after)
	}
	assertSpaced(t, "kilroy/ci", ps, every)
}

// TestServeE2ELiveAgentTranscript: while an API agent node waits on a tool
// call, the summary check (interval shortened by the internal hook) shows
// what the agent said and the tool it called so far, from its transcript.
func TestServeE2ELiveAgentTranscript(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-api03-E2ETESTKEY0123456789abcdefXYZ")
	gate := newGate(t)
	srv := agenttest.New(t,
		agenttest.Turn{Text: "Waiting for the gate to open", Calls: []agenttest.Call{{Name: "shell",
			Args: map[string]any{"command": "while [ ! -e " + gate + " ]; do sleep 0.1; done"}}}},
		agenttest.Text("Done. OUTCOME:SUCCESS"))
	policy := "agents:\n  default: anthropic\n  backends:\n" +
		"    anthropic: {kind: api, api: anthropic, base_url: " + dotQuote(srv.URL) + ", model: fake-model}\n"
	dot := "digraph ci {\n  start [shape=Mdiamond]\n  exit [shape=Msquare]\n" +
		"  agent [shape=box, prompt=\"Do the work\"]\n  start -> agent -> exit\n}\n"
	e := newE2E(t, e2eOptions{policy: policy, deferStart: true, files: map[string]string{"main.go": mainGo, ".kilroy/ci.dot": dot}})
	e.cfg.ProgressEvery = time.Second
	e.start()
	sha := e.repo.Commit(t, "feature-41", map[string]string{"notes.txt": "x\n"}, "a change")
	e.deliver("pull_request", e.openPR("opened", pr{number: 41, sha: sha, files: []string{"notes.txt"}}))
	e.waitFor("the summary to show the agent's transcript so far", func() bool {
		runs := e.named(sha, "kilroy/ci")
		if len(runs) == 0 {
			return false
		}
		for _, p := range progressPatches(runs[0].Patches()) {
			if strings.Contains(p.Summary, "Waiting for the gate to open") && strings.Contains(p.Summary, "shell") {
				return true
			}
		}
		return false
	})
	touch(t, gate)
	e.waitSettled(sha, "kilroy/ci")
	if sum := e.named(sha, "kilroy/ci")[0]; sum.Conclusion != "success" {
		t.Errorf("kilroy/ci %s, want success:\n%s", sum.Conclusion, sum.Summary)
	}
}
