package agent

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLineBuffer: lines written in pieces come out whole, each once, in
// order; a line longer than max keeps its head; an unfinished line waits.
func TestLineBuffer(t *testing.T) {
	b := lineBuffer{max: 8}
	var got []string
	each := func(l []byte) { got = append(got, string(l)) }
	for _, p := range []string{"ab", "c\nde", "f\n\n", strings.Repeat("x", 20) + "\nlong", "er than eight\nrest"} {
		b.feed([]byte(p), each)
	}
	want := []string{"abc", "def", "", "xxxxxxxx", "longer t"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("lines (-got +want):\n%s", diff)
	}
	if string(b.line) != "rest" {
		t.Errorf("unfinished line %q, want %q", b.line, "rest")
	}
}
