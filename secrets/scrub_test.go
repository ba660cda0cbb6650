package secrets

import (
	"bytes"
	"encoding/base64"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Every form of every secret leaves every file of the tree, each file
// keeping the rest of what it held; a hard link's other name and a link's
// target are not touched, and a file's mode is kept.
func TestScrubTree(t *testing.T) {
	const key, other = "sk-ant-api03-PLANTED0123456789", "webhook+secret/value"
	dir, outside := t.TempDir(), t.TempDir()
	files := map[string]string{
		"invocation.json":         `{"argv":["sh","-c","echo ` + key + `"]}`,
		"tool.stdout.log":         "before " + base64.StdEncoding.EncodeToString([]byte(key)) + " after\n",
		"home/.codex/snapshot.sh": "export CODEX_API_KEY=" + key + "\nexport X=" + url.QueryEscape(other) + "\n",
		"history/1/status.json":   "no secret here",
		"short.txt":               "short",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o640)
	}
	elsewhere := filepath.Join(outside, "elsewhere.txt")
	os.WriteFile(elsewhere, []byte(key), 0o644)
	os.Link(elsewhere, filepath.Join(dir, "hardlink.txt"))
	os.Symlink(elsewhere, filepath.Join(dir, "symlink.txt"))

	if err := ScrubTree(dir, []string{key, other, "short"}); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, name := range []string{"invocation.json", "tool.stdout.log", "home/.codex/snapshot.sh", "history/1/status.json", "short.txt", "hardlink.txt"} {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		got[name] = string(b)
	}
	want := map[string]string{
		"invocation.json":         `{"argv":["sh","-c","echo [REDACTED]"]}`,
		"tool.stdout.log":         "before [REDACTED] after\n",
		"home/.codex/snapshot.sh": "export CODEX_API_KEY=[REDACTED]\nexport X=[REDACTED]\n",
		"history/1/status.json":   "no secret here",
		"short.txt":               "short", // shorter than MinLen: not a secret
		"hardlink.txt":            "[REDACTED]",
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("files after ScrubTree (-got +want):\n%s", diff)
	}
	if b, _ := os.ReadFile(elsewhere); string(b) != key {
		t.Errorf("the file outside the tree was changed through a link: %q", b)
	}
	if fi, err := os.Stat(filepath.Join(dir, "invocation.json")); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("mode after scrubbing: %v, %v; want 0640", fi.Mode(), err)
	}
}

// A file over MaxRewrite (a node can leave one as big as its file-size
// limit) is never read whole: it is searched in chunks, and removed when a
// secret is in it, even across two chunks; one without a secret is kept.
func TestScrubTreeLargeFiles(t *testing.T) {
	const key = "sk-ant-api03-PLANTED0123456789"
	dir := t.TempDir()
	big := func(name string, at int, form string) string {
		b := bytes.Repeat([]byte("x"), MaxRewrite+3<<20)
		if form != "" {
			copy(b[at:], form)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	across := big("across.log", 2<<20-7, key) // spans the second chunk's start
	encoded := big("encoded.log", MaxRewrite+1<<20, base64.StdEncoding.EncodeToString([]byte(key)))
	clean := big("clean.log", 0, "")
	err := ScrubTree(dir, []string{key})
	for _, p := range []string{across, encoded} {
		if _, statErr := os.Stat(p); statErr == nil {
			t.Errorf("%s holds a form of the key and was kept", filepath.Base(p))
		}
		if err == nil || !strings.Contains(err.Error(), filepath.Base(p)) {
			t.Errorf("ScrubTree's error %v does not name %s", err, filepath.Base(p))
		}
	}
	if fi, statErr := os.Stat(clean); statErr != nil || fi.Size() != MaxRewrite+3<<20 {
		t.Errorf("the large file without a secret: %v, %v; want it kept as it was", fi, statErr)
	}
}
