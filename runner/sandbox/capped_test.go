package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func newCapped(t *testing.T, max int64) (*CappedFile, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "stdout.log")
	c, err := NewCappedFile(path, max)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, path
}

func TestCappedFileUnderCap(t *testing.T) {
	c, path := newCapped(t, 300)
	fmt.Fprint(c, strings.Repeat("x", 250))
	// Output under the cap is in the file as it comes, for live viewing.
	if got := readFile(t, path); got != strings.Repeat("x", 250) {
		t.Errorf("file before Close = %q", got)
	}
	fmt.Fprint(c, strings.Repeat("y", 50))
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := readFile(t, path), strings.Repeat("x", 250)+strings.Repeat("y", 50); got != want {
		t.Errorf("file = %q, want %q", got, want)
	}
	if c.Truncated() {
		t.Error("Truncated = true at exactly the cap")
	}
}

func TestCappedFileKeepsTail(t *testing.T) {
	const max = 300
	c, path := newCapped(t, max)
	var all strings.Builder
	for i := range 100 {
		line := fmt.Sprintf("line-%04d\n", i) // 10 bytes
		all.WriteString(line)
		fmt.Fprint(c, line)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	got := readFile(t, path)
	if len(got) > max {
		t.Errorf("file is %d bytes, cap %d", len(got), max)
	}
	marker, kept, ok := strings.Cut(got, "\n")
	if !ok || !strings.HasPrefix(marker, "[output truncated: ") {
		t.Fatalf("file does not start with a marker line:\n%s", got)
	}
	wantMarker := fmt.Sprintf("[output truncated: %d earlier bytes dropped, last %d of 1000 kept]", 1000-len(kept), len(kept))
	if marker != wantMarker {
		t.Errorf("marker = %q, want %q", marker, wantMarker)
	}
	if !strings.HasSuffix(all.String(), kept) || len(kept) < max-markerReserve {
		t.Errorf("kept %q, want the last %d bytes of the output", kept, max-markerReserve)
	}
	if !c.Truncated() || c.Written() != 1000 {
		t.Errorf("Truncated = %v, Written = %d; want true, 1000", c.Truncated(), c.Written())
	}
}

// Past the cap the file is refreshed as output continues, not only on Close.
func TestCappedFileRefreshesBeforeClose(t *testing.T) {
	c, path := newCapped(t, 1000)
	fmt.Fprint(c, strings.Repeat("a", 1000))
	fmt.Fprint(c, strings.Repeat("b", 600))
	got := readFile(t, path)
	if !strings.HasPrefix(got, "[output truncated: ") || !strings.HasSuffix(got, strings.Repeat("b", 600)) {
		t.Errorf("file before Close = %.80q...; want marker and the latest output", got)
	}
}

// The tail never starts inside a multi-byte character.
func TestCappedFileCutsOnRune(t *testing.T) {
	c, path := newCapped(t, 256) // keeps up to 128 bytes
	// 601 bytes: the last 128 start in the middle of an "é".
	fmt.Fprint(c, strings.Repeat("é", 300)+"x")
	c.Close()
	marker, kept, _ := strings.Cut(readFile(t, path), "\n")
	if want := strings.Repeat("é", 63) + "x"; kept != want {
		t.Errorf("kept %q, want %q", kept, want)
	}
	if want := "[output truncated: 474 earlier bytes dropped, last 127 of 601 kept]"; marker != want {
		t.Errorf("marker = %q, want %q", marker, want)
	}
}

func TestCappedFileConcurrentWrites(t *testing.T) {
	const max = 24*200 + markerReserve
	c, path := newCapped(t, max)
	total := writeLines(c, 8, 500)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	got := readFile(t, path)
	marker, kept, _ := strings.Cut(got, "\n")
	want := fmt.Sprintf("[output truncated: %d earlier bytes dropped, last %d of %d kept]", total-int64(len(kept)), len(kept), total)
	if marker != want || len(got) > max {
		t.Fatalf("marker = %q (file %d bytes), want %q (at most %d)", marker, len(got), want, max)
	}
	checkLines(t, kept)
}

func TestCappedFileErrors(t *testing.T) {
	if _, err := NewCappedFile(filepath.Join(t.TempDir(), "f"), 100); err == nil {
		t.Error("NewCappedFile with a cap below the marker: err = nil")
	}
	if _, err := NewCappedFile(filepath.Join(t.TempDir(), "missing", "f"), 1000); err == nil {
		t.Error("NewCappedFile in a missing directory: err = nil")
	}
	c, _ := newCapped(t, 1000)
	c.Close()
	if _, err := c.Write([]byte("late")); err == nil {
		t.Error("Write after Close: err = nil")
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

// The use: a tool node's stdout and stderr into capped files.
func TestRunIntoCappedFiles(t *testing.T) {
	dir := t.TempDir()
	out, err := NewCappedFile(filepath.Join(dir, "stdout.log"), 1024)
	if err != nil {
		t.Fatal(err)
	}
	c := bash(t, `for i in $(seq 1 2000); do echo "out $i"; echo "err $i" >&2; done`)
	c.Stdout, c.Stderr = out, out
	if _, err := Run(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	got := readFile(t, filepath.Join(dir, "stdout.log"))
	if len(got) > 1024 || !strings.HasSuffix(got, "out 2000\nerr 2000\n") {
		t.Errorf("stdout.log (%d bytes) ends %q", len(got), got[max(0, len(got)-40):])
	}
}
