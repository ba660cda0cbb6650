package gitops

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseStatus(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []statusEntry
	}{
		{"empty", "", nil},
		{"modified and untracked", " M a.txt\x00?? b c.txt\x00",
			[]statusEntry{{X: ' ', Y: 'M', Path: "a.txt"}, {X: '?', Y: '?', Path: "b c.txt"}}},
		{"rename then more", "R  new name\x00old name\x00D  gone\x00",
			[]statusEntry{{X: 'R', Y: ' ', Path: "new name", Orig: "old name"}, {X: 'D', Y: ' ', Path: "gone"}}},
		{"copy with worktree change", "CM dst\x00src\x00",
			[]statusEntry{{X: 'C', Y: 'M', Path: "dst", Orig: "src"}}},
		{"newline and unicode", "A  dir/line\nbreak\x00?? ünï/файл\x00",
			[]statusEntry{{X: 'A', Y: ' ', Path: "dir/line\nbreak"}, {X: '?', Y: '?', Path: "ünï/файл"}}},
		{"nested repository", "?? vendor/lib/\x00",
			[]statusEntry{{X: '?', Y: '?', Path: "vendor/lib/"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatus([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
}

func TestParseStatusMalformed(t *testing.T) {
	for _, in := range []string{" M a.txt", "R  new\x00", "M\x00", "XYZa\x00"} {
		if got, err := parseStatus([]byte(in)); err == nil {
			t.Errorf("parseStatus(%q) = %v, want an error", in, got)
		}
	}
}

func TestPlanStaging(t *testing.T) {
	excluded := func(p string) bool { return strings.HasPrefix(p, "node_modules/") }
	entries := []statusEntry{
		{X: ' ', Y: 'M', Path: "mod.go"},
		{X: 'M', Y: ' ', Path: "staged.go"},
		{X: '?', Y: '?', Path: "new.go"},
		{X: ' ', Y: 'D', Path: "gone.go"},
		{X: 'R', Y: ' ', Path: "node_modules/moved.js", Orig: "src.js"},
		{X: 'A', Y: ' ', Path: "node_modules/staged.js"},
		{X: '?', Y: '?', Path: "node_modules/x.js"},
	}
	got := planStaging(entries, excluded)
	want := stagePlan{
		add:      []string{"mod.go", "new.go", "gone.go"},
		unstage:  []string{"node_modules/moved.js", "node_modules/staged.js"},
		kept:     []string{"gone.go", "mod.go", "new.go", "src.js", "staged.go"},
		excluded: []string{"node_modules/moved.js", "node_modules/staged.js", "node_modules/x.js"},
	}
	if diff := cmp.Diff(got, want, cmp.AllowUnexported(stagePlan{})); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
}

// FuzzParseStatus checks that the parser never panics and that what it
// accepts re-encodes to the same bytes.
func FuzzParseStatus(f *testing.F) {
	f.Add([]byte(" M a\x00R  b\x00c\x00?? d e\x00"))
	f.Add([]byte("C  x\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, err := parseStatus(b)
		if err != nil {
			return
		}
		var enc strings.Builder
		for _, e := range entries {
			enc.WriteString(string([]byte{e.X, e.Y, ' '}) + e.Path + "\x00")
			if e.Orig != "" {
				enc.WriteString(e.Orig + "\x00")
			}
		}
		if enc.String() != string(b) {
			t.Errorf("round trip: got %q, want %q", enc.String(), b)
		}
	})
}

// The checkpoint's status only reads: it leaves the index as it was,
// where a plain git status rewrites it whenever stat data changed (a lock
// file made and renamed on every node's hot path). The commit after it
// refreshes the index anyway.
func TestStatusLeavesTheIndexAlone(t *testing.T) {
	g := newTestGit(t)
	repo := newRepo(t, g, map[string]string{"a.txt": "a\n"})
	wt, _, _ := newRun(t, g, repo)
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(wt, "a.txt"), later, later); err != nil {
		t.Fatal(err)
	}
	index := mustGit(t, g, wt, "rev-parse", "--path-format=absolute", "--git-path", "index")
	before, err := os.Stat(index)
	if err != nil {
		t.Fatal(err)
	}
	if _, entries, err := g.status(context.Background(), wt); err != nil || len(entries) != 0 {
		t.Fatalf("status: %v %v, want a clean worktree", entries, err)
	}
	after, err := os.Stat(index)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("status rewrote the index (%v, then %v)", before.ModTime(), after.ModTime())
	}
}
