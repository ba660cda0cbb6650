package runpage_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/runpage"
)

// TestBrowserFollowsLiveLog has headless Chromium load the page of a
// running run with script enabled, while, after the page was served, the
// running node's log grows and the node finishes: the page's DOM, dumped
// once the script had time to run, shows the line written after the load
// and the node's new state, and the page was fetched once more at most
// (the script swaps parts; it never reloads the whole page, which would
// not keep the reader's place). It skips when chromium is not installed.
func TestBrowserFollowsLiveLog(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (apt-get install chromium): the live page is not checked in a browser")
	}
	runsDir, f := newRun(t)
	writeFullRun(f)
	f.write("nodes/lint/stdout.log", "before the page loaded\n")
	p := newPages(t, runsDir, runpage.Options{})
	var mu sync.Mutex
	pages := 0
	mux := http.NewServeMux()
	mux.HandleFunc("GET /runs/{id}", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		pages++
		first := pages == 1
		mu.Unlock()
		run, err := p.Load(r.PathValue("id"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		run.LiveURL = runpage.StreamPath(run.ID)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", runpage.ContentSecurityPolicy)
		_ = p.Render(w, run)
		if first {
			// The page is out: the node prints more, which only the
			// script can bring to the page.
			appendLine(t, filepath.Join(runsDir, runID, "nodes/lint/stdout.log"), "written after the page loaded\n")
			appendLine(t, filepath.Join(runsDir, runID, "progress.ndjson"),
				`{"time":"2025-01-02T03:04:20Z","type":"node_finished","run_id":"`+runID+`","node":"lint","attempt":1,"status":"success","duration_ms":1000}`+"\n")
		}
	})
	mux.HandleFunc("GET /runs/{id}/live", func(w http.ResponseWriter, r *http.Request) {
		// Short streams: headless Chromium's virtual time stands still
		// while a request is open; the script's EventSource reconnects.
		sctx, cancel := context.WithTimeout(r.Context(), 300*time.Millisecond)
		defer cancel()
		_ = p.Stream(sctx, w, r.PathValue("id"), runpage.StreamSince(r), 50*time.Millisecond)
	})
	mux.HandleFunc("GET "+runpage.LiveScriptPath, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		_, _ = w.Write(runpage.LiveScript())
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
		"--disable-extensions", "--user-data-dir="+t.TempDir(), "--enable-logging=stderr", "--v=0",
		"--run-all-compositor-stages-before-draw", "--virtual-time-budget=3000", "--dump-dom", srv.URL+"/runs/"+runID)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	dom := stdout.String()
	if !strings.Contains(dom, "written after the page loaded") {
		t.Errorf("the page does not show the line the node wrote after it loaded:\n%s\n%s", dom, stderr.String())
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, "Uncaught") || strings.Contains(line, "Content Security Policy") {
			t.Errorf("the page logged: %s", line)
		}
	}
	if !strings.Contains(dom, `<h3 id="node-lint"><code>lint</code> <span class="status-success">success</span></h3>`) {
		t.Errorf("the page does not show that lint finished after it loaded")
	}
	mu.Lock()
	defer mu.Unlock()
	if pages > 2 {
		t.Errorf("the page was loaded %d times: the script must not reload it", pages)
	}
}

func appendLine(t *testing.T, path, s string) {
	fh, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Error(err)
		return
	}
	defer fh.Close()
	if _, err := fh.WriteString(s); err != nil {
		t.Error(err)
	}
}
