package image

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// Files written by the writers' goroutines land as if written in layer
// order: a later entry at the same path, a directory or symbolic link
// replacing a file, a hard link to a file just written, a file below one
// just written, whiteouts and opaque directories all see the files before
// them. Each case is unpacked with the goroutines and with every file
// written in place, many times, since a missed wait shows only when a
// goroutine is late; the two trees must match, and the expected one is
// spelled out besides.
func TestFilesInFlightKeepLayerOrder(t *testing.T) {
	var filler []ent
	for i := range 40 {
		filler = append(filler, file(fmt.Sprintf("d/f%02d", i), strings.Repeat("x", i*100)))
	}
	with := func(ents ...ent) []ent { return append(append([]ent{}, filler...), ents...) }
	for _, tc := range []struct {
		name   string
		layers [][]ent
		want   string // the lines of listTree for d/a and below, or the error's
	}{
		{"same path twice", [][]ent{with(file("d/a", "1"), file("d/a", "2"))}, "d/a = 2"},
		{"directory replaces a file", [][]ent{with(file("d/a", "1"), dir("d/a"), file("d/a/b", "2"))}, "d/a/\nd/a/b = 2"},
		{"symlink replaces a file", [][]ent{with(file("d/a", "1"), symlink("d/a", "x"))}, "d/a -> x"},
		{"file replaces a directory of files", [][]ent{with(file("d/a/b", "1"), file("d/a/c", "2"), file("d/a", "3"))}, "d/a = 3"},
		{"hard link to a file just written", [][]ent{with(file("d/a", "1"), hardlink("d/h", "d/a"))}, "d/a = 1\nd/h = 1"},
		{"file below a file", [][]ent{with(file("d/a", "1"), file("d/a/b", "2"))}, "unsafe"},
		{"whiteout in the next layer", [][]ent{with(file("d/a", "1")), {file("d/.wh.a", "")}}, ""},
		{"opaque directory in the next layer", [][]ent{with(file("d/a", "1")), {file("d/b", "2"), file("d/.wh..wh..opq", "")}}, "d/b = 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i := range 15 {
				got := unpackWith(t, tc.layers, asyncFileSize)
				ref := unpackWith(t, tc.layers, -1)
				if got != ref {
					t.Fatalf("run %d: with the goroutines:\n%s\nwritten in place:\n%s", i, got, ref)
				}
				if rest := afterFiller(got); rest != tc.want {
					t.Fatalf("run %d: got\n%s\nwant\n%s", i, rest, tc.want)
				}
			}
		})
	}
}

// unpackWith unpacks layers into a new directory, files of at most async
// bytes by the goroutines, and lists the tree, or says "unsafe" for an
// ErrUnsafe refusal.
func unpackWith(t *testing.T, layers [][]ent, async int64) string {
	t.Helper()
	dir := t.TempDir()
	u, err := newUnpacker(dir, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	defer u.close()
	u.async = async
	for _, l := range layers {
		if err = u.layer(context.Background(), bytes.NewReader(tarBytes(t, l...))); err != nil {
			break
		}
	}
	if err == nil {
		err = u.finish()
	}
	switch {
	case errors.Is(err, ErrUnsafe):
		return "unsafe"
	case err != nil:
		t.Fatalf("async %d: %v", async, err)
	}
	return listTree(t, dir)
}

// afterFiller drops the filler files and "d/" from a listing.
func afterFiller(list string) string {
	if list == "unsafe" {
		return list
	}
	var keep []string
	for l := range strings.SplitSeq(list, "\n") {
		if l != "d/" && !strings.HasPrefix(l, "d/f") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}
