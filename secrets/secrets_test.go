package secrets

import (
	"encoding/base64"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestScanFindsEveryForm(t *testing.T) {
	const key = "sk-ant-api03-S3cr3tKeyValue+/=="
	sc := NewScanner([]Secret{{Name: "ANTHROPIC_API_KEY", Value: key}, {Name: "short", Value: "abc"}})
	for _, tc := range []struct {
		name, text string
		line       int
		encoded    bool
	}{
		{"plain", "a\nb\nkey=" + key + "\n", 3, false},
		{"base64", "x\n" + base64.StdEncoding.EncodeToString([]byte(key)), 2, true},
		{"git credential", "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+key)), 1, true},
		{"url escaped", "\n\n\n\nhttps://x/?k=" + url.QueryEscape(key), 5, true},
		{"across a chunk boundary", strings.Repeat("z\n", 40000) + strings.Repeat("y", 70<<10-len(key)/2) + key, 40001, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, ok, err := sc.Scan(strings.NewReader(tc.text))
			if err != nil || !ok {
				t.Fatalf("Scan = %v, %v, %v; want a find", f, ok, err)
			}
			if f.Line != tc.line || f.Name != "ANTHROPIC_API_KEY" || f.Encoded != tc.encoded {
				t.Errorf("found %+v, want line %d encoded %v", f, tc.line, tc.encoded)
			}
			if strings.Contains(f.String(), key) {
				t.Errorf("the report %q shows the secret", f)
			}
		})
	}
	if _, ok, _ := sc.Scan(strings.NewReader("abc abc nothing here")); ok {
		t.Errorf("found a secret in clean text (or a value shorter than MinLen)")
	}
}

func TestScanPathJudgesLinksByTarget(t *testing.T) {
	dir := t.TempDir()
	const tok = "ghs_0123456789abcdefABCDEF"
	os.Symlink("/nowhere/"+tok, filepath.Join(dir, "link"))
	os.WriteFile(filepath.Join(dir, "clean"), []byte("nothing"), 0o644)
	sc := NewScanner([]Secret{{Name: "a token", Value: tok}})
	if _, ok, err := sc.ScanPath(filepath.Join(dir, "link")); !ok || err != nil {
		t.Errorf("a link whose target holds the token: found %v (%v)", ok, err)
	}
	if _, ok, err := sc.ScanPath(filepath.Join(dir, "clean")); ok || err != nil {
		t.Errorf("a clean file: found %v (%v)", ok, err)
	}
}
