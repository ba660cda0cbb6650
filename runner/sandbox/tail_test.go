package sandbox

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestTail(t *testing.T) {
	tests := []struct {
		n         int
		writes    []string
		want      string
		truncated bool
	}{
		{8, nil, "", false},
		{8, []string{"abc"}, "abc", false},
		{8, []string{"abcdefgh"}, "abcdefgh", false},
		{8, []string{"abcdefghi"}, "bcdefghi", true},
		{8, []string{"abc", "defgh", "ij"}, "cdefghij", true},
		{8, []string{"abcdef", "ghijklmnopqrstuvwxyz"}, "stuvwxyz", true},
		{8, []string{"abcdefg", "h", "i", "jk", "lmnopq"}, "jklmnopq", true},
		{0, []string{"abc"}, "", true},
	}
	for _, tt := range tests {
		tail := NewTail(tt.n)
		for _, w := range tt.writes {
			if n, err := tail.Write([]byte(w)); n != len(w) || err != nil {
				t.Fatalf("Write(%q) = %d, %v", w, n, err)
			}
		}
		if got := string(tail.Bytes()); got != tt.want {
			t.Errorf("NewTail(%d) after %q: Bytes = %q, want %q", tt.n, tt.writes, got, tt.want)
		}
		if got := tail.Truncated(); got != tt.truncated {
			t.Errorf("NewTail(%d) after %q: Truncated = %v, want %v", tt.n, tt.writes, got, tt.truncated)
		}
		if got, want := tail.Written(), int64(len(strings.Join(tt.writes, ""))); got != want {
			t.Errorf("Written = %d, want %d", got, want)
		}
	}
}

// writeLines writes lines of equal length from several goroutines at once,
// as stdout and stderr copiers do, and returns how many bytes it wrote.
func writeLines(w interface{ Write([]byte) (int, error) }, writers, lines int) int64 {
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range lines {
				fmt.Fprintf(w, "writer-%02d line-%08d\n", g, i) // 24 bytes
			}
		})
	}
	wg.Wait()
	return int64(writers * lines * 24)
}

// checkLines verifies that every line kept is whole: concurrent writes did
// not interleave inside a Write.
func checkLines(t *testing.T, kept string) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSuffix(kept, "\n"), "\n") {
		var g, i int
		if _, err := fmt.Sscanf(line, "writer-%02d line-%08d", &g, &i); err != nil || len(line) != 23 {
			t.Fatalf("garbled line %q", line)
		}
	}
}

func TestTailConcurrentWrites(t *testing.T) {
	tail := NewTail(24 * 100)
	total := writeLines(tail, 8, 500)
	if tail.Written() != total || !tail.Truncated() {
		t.Errorf("Written = %d, Truncated = %v; want %d, true", tail.Written(), tail.Truncated(), total)
	}
	kept := tail.Bytes()
	if len(kept) != 24*100 {
		t.Fatalf("kept %d bytes, want %d", len(kept), 24*100)
	}
	checkLines(t, string(kept))
}
