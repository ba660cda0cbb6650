package runpage_test

import (
	"bytes"
	"context"
	"flag"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/runpage"
)

var screenshot = flag.String("screenshot", "", "keep the run page screenshot TestBrowserRendersRunPage takes at this path")

// TestBrowserRendersRunPage serves the page of a full run and has headless
// Chromium (Debian's chromium) load it with script enabled: the page must
// log nothing to the console and paint a screenshot of real content. It
// skips when chromium is not installed.
func TestBrowserRendersRunPage(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (apt-get install chromium): the run page is not checked in a browser")
	}
	runsDir, f := newRun(t)
	writeFullRun(f)
	f.write("graph.dot", `digraph ci { start [shape=Mdiamond]; build [shape=parallelogram, tool_command="make", label="Build all"]; test [shape=parallelogram, tool_command="go test"]; lint [shape=parallelogram, tool_command="lint"]; done [shape=Msquare]; start -> build -> test -> lint -> done }`)
	f.write("report.md", reportMD)
	p := newPages(t, runsDir, runpage.Options{Source: func(string) runpage.Source {
		return runpage.Source{Repo: "o/r", RepoURL: "/repo", PR: 7, PRURL: "/repo/pull/7", HeadSHA: sha2}
	}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/runs/"+runID {
			http.NotFound(w, r)
			return
		}
		run, err := p.Load(runID)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", runpage.ContentSecurityPolicy)
		if err := p.Render(w, run); err != nil {
			t.Error(err)
		}
	}))
	defer srv.Close()

	out := filepath.Join(t.TempDir(), "page.png")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
		"--disable-extensions", "--user-data-dir="+t.TempDir(), "--enable-logging=stderr", "--v=0",
		"--window-size=1280,1600", "--screenshot="+out, srv.URL+"/runs/"+runID)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, "CONSOLE") || strings.Contains(line, "Uncaught") || strings.Contains(line, "Content Security Policy") {
			t.Errorf("the page logged to the console: %s", line)
		}
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("no screenshot: %v\n%s", err, stderr.String())
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	// Real content paints many dark pixels (text) on the light page.
	dark, b := 0, img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			if r, g, bl, _ := img.At(x, y).RGBA(); r+g+bl < 3*0x6000 {
				dark++
			}
		}
	}
	if b.Dx() != 1280 || dark < 2000 {
		t.Errorf("screenshot %v with %d dark sample pixels: want a 1280-wide page full of text", b, dark)
	}
	if *screenshot != "" {
		if err := os.WriteFile(*screenshot, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// reportMD is a report as checks.LocalReport writes it for a failed run.
const reportMD = "# kilroy/ci: 1 of 3 nodes passed · test failed: exit status 1\n\n" +
	"❌ **Failed** at `test`: exit status 1\n\n" +
	"Pipeline `ci` · run `" + runID + "` · on [`2222222`](/repo/commit/2222222)\n\n" +
	"> **Goal:** Keep \\_main\\_ green &lt;always&gt;\n\n" +
	"| Node | Kind | Status | Attempts | Duration | Checkpoint |\n|---|---|---|---:|---:|---|\n" +
	"| `build` Build all | tool | ✅ success | 1 | 2.0s | `1111111` |\n" +
	"| `test` | tool | ❌ fail | 2 | 2.5s | `2222222` |\n" +
	"| `lint` | tool | ⏭️ skipped | — | — | — |\n\n" +
	"```mermaid\nflowchart TD\n  build --> test\n```\n\n" +
	"### Not run\n\n- ⏭️ `lint`: an earlier node failed\n\n" +
	"## test\n\n```text\n--- FAIL: TestX\n```\n"
