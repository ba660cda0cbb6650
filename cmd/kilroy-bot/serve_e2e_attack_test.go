package main

import (
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
)

// TestServeE2EStalledBodies: 200 unauthenticated connections that declare
// a 26 MB body (under the 25 MiB cap) and send one byte each hold one read
// chunk apiece, not their declared length: the heap stays within the body
// budget, /healthz answers, and a pull request still runs to completion.
func TestServeE2EStalledBodies(t *testing.T) {
	const (
		conns    = 200
		declared = 26_000_000
		budget   = 64 << 20 // the webhook's default
		overhead = 32 << 20 // the connections' own buffers and goroutines
	)
	e := newE2E(t, e2eOptions{})
	before := liveHeap()
	var open []net.Conn
	for range conns {
		open = append(open, e.stallBody(declared))
	}
	// Each holds the byte it sent and a 16 KiB read ahead.
	e.waitFor("every stalled body to reach the webhook", func() bool {
		return e.bodyBytes() == conns*(16<<10+1)
	})
	if grew := liveHeap() - before; grew > budget+overhead {
		t.Errorf("%d stalled deliveries grew the heap by %d MiB, want at most %d MiB", conns, grew>>20, (budget+overhead)>>20)
	}
	if code, body := e.get("/healthz"); code != http.StatusOK {
		t.Errorf("/healthz during the stall = %d %s, want 200", code, body)
	}
	sha := e.repo.Commit(t, "feature-1", map[string]string{"README.md": "change\n"}, "change")
	e.deliver("pull_request", e.openPR("opened", pr{number: 1, sha: sha}))
	e.waitSettled(sha, "kilroy/ci")

	for _, c := range open {
		c.Close()
	}
	e.waitFor("the stalled bodies to give back their budget", func() bool { return e.bodyBytes() == 0 })
}

// stallBody opens a connection that posts a delivery declaring a body of
// declared bytes, sends one of them and leaves the connection open; the
// test's end closes it.
func (e *e2e) stallBody(declared int) net.Conn {
	e.t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(e.base, "http://"))
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { c.Close() })
	_, err = fmt.Fprintf(c, "POST /webhooks/github HTTP/1.1\r\nHost: kilroy\r\nContent-Type: application/json\r\n"+
		"X-GitHub-Event: pull_request\r\nX-GitHub-Delivery: stalled\r\nX-Hub-Signature-256: sha256=%s\r\n"+
		"Content-Length: %d\r\n\r\n{", strings.Repeat("0", 64), declared)
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// bodyBytes reads kilroy_webhook_body_bytes from /metrics; -1 when absent.
func (e *e2e) bodyBytes() int64 {
	e.t.Helper()
	_, m := e.get("/metrics")
	for line := range strings.Lines(m) {
		if v, ok := strings.CutPrefix(line, "kilroy_webhook_body_bytes "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				e.t.Fatalf("kilroy_webhook_body_bytes: %v", err)
			}
			return int64(f)
		}
	}
	return -1
}

// liveHeap is the live heap after a collection.
func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestServeE2EOversizeInputs: a .kilroy/config.yml or a pipeline file
// over 1 MiB in a pull request fails the kilroy/config check with an
// annotation on its first line giving the size, and is never decoded.
func TestServeE2EOversizeInputs(t *testing.T) {
	var cfg strings.Builder
	cfg.WriteString("version: 1\npipelines:\n")
	for i := 0; cfg.Len() <= 1<<20; i++ {
		fmt.Fprintf(&cfg, "  p%d:\n    graph: .kilroy/ci.dot\n", i)
	}
	dot := ciDOT(failingVet) + "// " + strings.Repeat("x", 1<<20) + "\n"
	for i, tc := range []struct{ path, content string }{
		{".kilroy/config.yml", cfg.String()},
		{".kilroy/ci.dot", dot},
	} {
		t.Run(tc.path, func(t *testing.T) {
			e := newE2E(t, e2eOptions{})
			n := 20 + i
			sha := e.repo.Commit(t, fmt.Sprintf("feature-%d", n), map[string]string{tc.path: tc.content}, "grow")
			e.deliver("pull_request", e.openPR("opened", pr{number: n, sha: sha, files: []string{tc.path}}))
			e.assertConfigCheck(sha, tc.path, 1)
			want := fmt.Sprintf("is %d bytes, over the 1048576-byte (1 MiB) limit", len(tc.content))
			if a := e.named(sha, "kilroy/config")[0].Annotations; len(a) == 0 || !strings.Contains(a[0].Message, want) {
				t.Errorf("annotations %+v, want one saying %q", a, want)
			}
			if code, body := e.get("/healthz"); code != http.StatusOK {
				t.Errorf("/healthz = %d %s", code, body)
			}
		})
	}
}

// TestServeE2EHostileGoMod: a pull request whose pipeline turns go.mod
// into a link to /dev/zero before a verify node runs `echo ok`: the bot's
// read of go.mod for findings neither hangs nor fills memory, the run
// passes, and /healthz answers.
func TestServeE2EHostileGoMod(t *testing.T) {
	const pipeline = `digraph ci {
  start [shape=Mdiamond]
  link [shape=parallelogram, tool_command="rm -f go.mod && ln -s /dev/zero go.mod"]
  vet [shape=octagon, command="echo ok"]
  done [shape=Msquare]
  start -> link -> vet -> done
}
`
	e := newE2E(t, e2eOptions{files: map[string]string{"main.go": mainGo, "go.mod": "module example.test/m\n",
		".kilroy/ci.dot": pipeline}})
	sha := e.repo.Commit(t, "feature-30", map[string]string{"README.md": "change\n"}, "change")
	e.deliver("pull_request", e.openPR("opened", pr{number: 30, sha: sha}))
	runs := e.waitSettled(sha, "kilroy/ci", "kilroy/ci/vet")
	for _, r := range runs {
		if r.Conclusion != "success" {
			t.Errorf("%s: %s %q, want success", r.Name, r.Conclusion, r.Title)
		}
	}
	if code, body := e.get("/healthz"); code != http.StatusOK {
		t.Errorf("/healthz = %d %s", code, body)
	}
}

// TestServeE2EPushFails: GitHub answers every push of the run branch with
// a 502. The pipeline passes, but its summary check does not say so: it
// fails, its title and first line name the push, and no server path
// shows; the verify node's check keeps its own result.
func TestServeE2EPushFails(t *testing.T) {
	e := newE2E(t, e2eOptions{files: map[string]string{"main.go": mainGo, ".kilroy/ci.dot": ciDOT("echo ok")}})
	e.gh.Inject(ghapptest.Fault{Method: "POST", Path: "/" + e2eRepo + ".git/git-receive-pack", Times: 1000, Status: http.StatusBadGateway})
	sha := e.repo.Commit(t, "feature-40", map[string]string{"README.md": "change\n"}, "change")
	e.deliver("pull_request", e.openPR("opened", pr{number: 40, sha: sha}))
	e.waitSettled(sha, "kilroy/ci", "kilroy/ci/vet")
	e.waitIdle()
	sum, vet := e.named(sha, "kilroy/ci")[0], e.named(sha, "kilroy/ci/vet")[0]
	if sum.Conclusion != "failure" || !strings.HasPrefix(sum.Title, "run branch not pushed: kilroy/run/ci/") {
		t.Errorf("kilroy/ci: %s %q, want failure titled with the failed push", sum.Conclusion, sum.Title)
	}
	if first, _, _ := strings.Cut(sum.Summary, "\n"); !strings.HasPrefix(first, "❌ **Run branch not pushed**: kilroy/run/ci/") ||
		!strings.Contains(first, "git push") {
		t.Errorf("kilroy/ci summary's first line %q does not name the push", first)
	}
	for _, s := range []string{sum.Title, sum.Summary, sum.Text} {
		if strings.Contains(s, e.cfg.DataDir) {
			t.Errorf("kilroy/ci shows the data dir:\n%s", s)
		}
	}
	if vet.Conclusion != "success" {
		t.Errorf("kilroy/ci/vet: %s, want success", vet.Conclusion)
	}
}

// TestServeE2EFileOverGitHubLimit: a node that writes a 120 MiB file fails
// its checkpoint, and the summary check gives the path and size.
func TestServeE2EFileOverGitHubLimit(t *testing.T) {
	const pipeline = `digraph ci {
  start [shape=Mdiamond]
  build [shape=parallelogram, tool_command="truncate -s 120M big.bin"]
  done [shape=Msquare]
  start -> build -> done
}
`
	e := newE2E(t, e2eOptions{files: map[string]string{"main.go": mainGo, ".kilroy/ci.dot": pipeline}})
	sha := e.repo.Commit(t, "feature-41", map[string]string{"README.md": "change\n"}, "change")
	e.deliver("pull_request", e.openPR("opened", pr{number: 41, sha: sha}))
	e.waitSettled(sha, "kilroy/ci")
	e.waitIdle()
	sum := e.named(sha, "kilroy/ci")[0]
	const want = "big.bin is 125829120 bytes (120.0 MiB), over GitHub's 100 MiB limit"
	if sum.Conclusion != "failure" || !strings.Contains(sum.Summary, want) {
		t.Errorf("kilroy/ci: %s %q, want failure saying %q:\n%s", sum.Conclusion, sum.Title, want, sum.Summary)
	}
}
