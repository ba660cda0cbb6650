package ghapptest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// SharedDir is the project's shared directory, "../shared" beside the
// module root, which holds testdata/github/ (real webhook payloads and
// GitHub's request schemas). It skips t when the directory is missing, as in
// a checkout without it.
func SharedDir(t testing.TB) string {
	t.Helper()
	dir, err := findSharedDir()
	if err != nil {
		t.Skipf("shared GitHub fixtures not found beside the checkout; "+
			"put the project's shared/ directory next to the module root to run this test (%v)", err)
	}
	return dir
}

// findSharedDir walks up from the working directory (the package's, under
// go test) to go.mod and looks beside that directory.
func findSharedDir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			shared := filepath.Join(filepath.Dir(dir), "shared")
			if _, err := os.Stat(filepath.Join(shared, "testdata", "github")); err != nil {
				return "", fmt.Errorf("look beside module root: %w", err)
			}
			return shared, nil
		}
		if filepath.Dir(dir) == dir {
			return "", errors.New("no go.mod above the working directory")
		}
	}
}

// restSchemaDir holds checks-{create,update}.request.schema.json.
func restSchemaDir(t testing.TB) string {
	t.Helper()
	return filepath.Join(SharedDir(t), "testdata", "github", "rest")
}

// LoadPayload returns the exact bytes of a real webhook payload, named
// relative to testdata/github/webhooks/ (e.g. "pull_request/opened.payload.json").
// Sign these bytes as they are; re-serialising changes the signature.
func LoadPayload(t testing.TB, name string) []byte {
	t.Helper()
	p := filepath.Join(SharedDir(t), "testdata", "github", "webhooks", filepath.FromSlash(name))
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ghapptest: no webhook payload %q in the shared fixtures", name)
	}
	if err != nil {
		t.Fatalf("ghapptest: read payload %q: %v", name, err)
	}
	return b
}
