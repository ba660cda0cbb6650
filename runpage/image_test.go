package runpage_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/runner"
	"github.com/kilroy-bot/kilroy-bot/runner/image"
	"github.com/kilroy-bot/kilroy-bot/runpage"
)

// The page names the image a run's nodes ran in and the digest it
// pinned, from checkpoint.json as the runner writes it (its own type, so
// that a renamed field fails here); a local source by its file's name,
// never a path of the machine; a host-jail run has no image row.
func TestRenderImage(t *testing.T) {
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		name    string
		img     *runner.RunImage
		want    []string
		notWant []string
	}{
		{name: "registry", img: &runner.RunImage{Ref: "golang:1.23-bookworm",
			Pinned: image.Ref{Name: "docker.io/library/golang:1.23-bookworm", Digest: digest}},
			want: []string{"<th>Image</th><td><code>golang:1.23-bookworm</code> @ <code>" + digest + "</code></td>"}},
		{name: "local archive", img: &runner.RunImage{Ref: "oci-archive:/home/someone/build/tools.tar",
			Pinned: image.Ref{Name: "oci-archive:/home/someone/build/tools.tar", Digest: digest}},
			want:    []string{"<code>oci-archive:tools.tar</code> @ <code>" + digest + "</code>"},
			notWant: []string{"/home/someone"}},
		{name: "host jail", notWant: []string{"<th>Image</th>"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runsDir, f := newRun(t)
			writeFullRun(f)
			p := filepath.Join(f.dir, "checkpoint.json")
			var cp map[string]any
			b, err := os.ReadFile(p)
			if err == nil {
				err = json.Unmarshal(b, &cp)
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.img != nil {
				cp["image"] = tc.img
			}
			f.json("checkpoint.json", cp)
			pages := newPages(t, runsDir, runpage.Options{})
			run, err := pages.Load(runID)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := pages.Render(&buf, run); err != nil {
				t.Fatal(err)
			}
			page := buf.String()
			for _, w := range tc.want {
				if !strings.Contains(page, w) {
					t.Errorf("page lacks %q", w)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(page, w) {
					t.Errorf("page has %q", w)
				}
			}
		})
	}
}
