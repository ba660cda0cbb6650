package gitops

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
)

// TreeSize is what checking out a commit writes: files (regular files and
// symbolic links; submodules are not checked out) and their bytes.
type TreeSize struct {
	Files int64
	Bytes int64
}

// TreeLimits bound a checkout; zero is no bound.
type TreeLimits struct {
	MaxFiles int64
	MaxBytes int64
}

// TreeTooLargeError is a commit whose tree is over a TreeLimits. Size is
// what had been counted when the walk stopped: over the limit, not the
// whole tree.
type TreeTooLargeError struct {
	Rev    string
	Size   TreeSize
	Limits TreeLimits
}

func (e *TreeTooLargeError) Error() string {
	if e.Limits.MaxFiles > 0 && e.Size.Files > e.Limits.MaxFiles {
		return fmt.Sprintf("the tree of %s has more than %d files", short(e.Rev), e.Limits.MaxFiles)
	}
	return fmt.Sprintf("the tree of %s has more than %d bytes", short(e.Rev), e.Limits.MaxBytes)
}

// FilesOver reports whether the files limit, not the bytes one, was hit.
func (e *TreeTooLargeError) FilesOver() bool {
	return e.Limits.MaxFiles > 0 && e.Size.Files > e.Limits.MaxFiles
}

// MeasureTree counts the files and bytes a checkout of rev would write,
// without writing them, and stops with a *TreeTooLargeError as soon as
// they pass lim. A pull request of a few objects can name a tree of a
// million paths (a tree of 1,000 copies of one tree of 1,000 copies of
// one blob), or a billion one level deeper; the walk reads each distinct
// tree once and multiplies, so it costs the objects, not the paths. One
// `git cat-file --batch-command` answers every question.
func (g *Git) MeasureTree(ctx context.Context, repoDir, rev string, lim TreeLimits) (TreeSize, error) {
	root, err := g.runStr(ctx, call{dir: repoDir, readOnly: true, args: []string{"rev-parse", "--verify", "--end-of-options", rev + "^{tree}"}})
	if err != nil {
		return TreeSize{}, fmt.Errorf("gitops: measure tree of %s: %w", short(rev), err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cf, err := g.startCatFile(ctx, repoDir)
	if err != nil {
		return TreeSize{}, err
	}
	defer cf.close()
	w := &treeWalk{cf: cf, lim: lim, trees: map[string]TreeSize{}, blobs: map[string]int64{}}
	size, err := w.tree(root, 0)
	var tl *TreeTooLargeError
	if errors.As(err, &tl) {
		tl.Rev = rev
	}
	if err != nil {
		return size, fmt.Errorf("gitops: measure tree of %s: %w", short(rev), err)
	}
	return size, nil
}

// maxTreeDepth is deeper than any path a checkout can write (PATH_MAX
// 4096 bytes, two per level at least).
const maxTreeDepth = 2048

// treeWalk measures trees depth first, each distinct tree and blob once.
type treeWalk struct {
	cf    *catFile
	lim   TreeLimits
	trees map[string]TreeSize // measured trees
	blobs map[string]int64    // blob sizes
}

func (w *treeWalk) over(s TreeSize) error {
	if w.lim.MaxFiles > 0 && s.Files > w.lim.MaxFiles || w.lim.MaxBytes > 0 && s.Bytes > w.lim.MaxBytes {
		return &TreeTooLargeError{Size: s, Limits: w.lim}
	}
	return nil
}

// tree measures tree id. Every tree is part of the root at least once, so
// any partial sum over a limit is the root's too, and the walk stops.
func (w *treeWalk) tree(id string, depth int) (TreeSize, error) {
	if s, ok := w.trees[id]; ok {
		return s, nil
	}
	if depth > maxTreeDepth {
		return TreeSize{}, fmt.Errorf("trees nested more than %d deep", maxTreeDepth)
	}
	entries, err := w.cf.tree(id)
	if err != nil {
		return TreeSize{}, err
	}
	if err := w.sizeBlobs(entries); err != nil {
		return TreeSize{}, err
	}
	var sum TreeSize
	for _, e := range entries {
		var s TreeSize
		switch {
		case e.mode == "40000":
			if s, err = w.tree(e.id, depth+1); err != nil {
				return sum, err
			}
		case e.mode == "160000": // a submodule: not checked out
		default:
			s = TreeSize{Files: 1, Bytes: w.blobs[e.id]}
		}
		sum = TreeSize{Files: satAdd(sum.Files, s.Files), Bytes: satAdd(sum.Bytes, s.Bytes)}
		if err := w.over(sum); err != nil {
			return sum, err
		}
	}
	w.trees[id] = sum
	return sum, nil
}

// sizeBlobs asks for the sizes of the blobs of entries not yet known.
func (w *treeWalk) sizeBlobs(entries []treeEntry) error {
	var ids []string
	for _, e := range entries {
		if e.mode == "40000" || e.mode == "160000" {
			continue
		}
		if _, ok := w.blobs[e.id]; !ok {
			w.blobs[e.id] = 0
			ids = append(ids, e.id)
		}
	}
	sizes, err := w.cf.sizes(ids)
	for i, s := range sizes {
		w.blobs[ids[i]] = s
	}
	return err
}

// satAdd adds non-negative counts, stopping at the largest int64.
func satAdd(a, b int64) int64 {
	if a > (1<<63-1)-b {
		return 1<<63 - 1
	}
	return a + b
}

type treeEntry struct {
	mode, id string
}

// catFile is a running `git cat-file --batch-command --buffer`.
type catFile struct {
	in   *os.File // git's stdin
	out  *bufio.Reader
	outF *os.File
	done chan error
}

func (g *Git) startCatFile(ctx context.Context, repoDir string) (*catFile, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("gitops: cat-file pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("gitops: cat-file pipe: %w", err)
	}
	c := call{dir: repoDir, readOnly: true, args: []string{"cat-file", "--batch-command", "--buffer"}}
	argv := append(append([]string{g.path}, g.hardening()...), c.args...)
	cf := &catFile{in: inW, out: bufio.NewReaderSize(outR, 64<<10), outF: outR, done: make(chan error, 1)}
	go func() {
		defer inR.Close()
		defer outW.Close() // the reader sees EOF when git is gone
		res, err := sandbox.Run(ctx, sandbox.Cmd{Argv: argv, Dir: repoDir, Env: g.baseEnv(c), Stdin: inR, Stdout: outW})
		if err == nil && res.ExitCode != 0 {
			err = fmt.Errorf("git cat-file exited %d", res.ExitCode)
		}
		cf.done <- err
	}()
	return cf, nil
}

func (cf *catFile) close() {
	cf.in.Close()
	cf.outF.Close()
	<-cf.done
}

// tree returns the entries of tree id.
func (cf *catFile) tree(id string) ([]treeEntry, error) {
	if _, err := fmt.Fprintf(cf.in, "contents %s\nflush\n", id); err != nil {
		return nil, fmt.Errorf("gitops: cat-file: %w", err)
	}
	kind, size, err := cf.header(id)
	if err != nil {
		return nil, err
	}
	if kind != "tree" {
		return nil, fmt.Errorf("gitops: object %s is a %s, not a tree", id, kind)
	}
	body := make([]byte, size+1) // and the newline after it
	if _, err := io.ReadFull(cf.out, body); err != nil {
		return nil, fmt.Errorf("gitops: cat-file: read tree %s: %w", id, err)
	}
	return parseTree(body[:size], len(id)/2)
}

// sizes returns the sizes of objects ids, in order. The requests are
// written while the answers are read, so that neither pipe fills.
func (cf *catFile) sizes(ids []string) ([]int64, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	wrote := make(chan error, 1)
	go func() {
		w := bufio.NewWriter(cf.in)
		for _, id := range ids {
			fmt.Fprintf(w, "info %s\n", id)
		}
		w.WriteString("flush\n")
		wrote <- w.Flush()
	}()
	out := make([]int64, 0, len(ids))
	for _, id := range ids {
		_, size, err := cf.header(id)
		if err != nil {
			return out, err
		}
		out = append(out, size)
	}
	if err := <-wrote; err != nil {
		return out, fmt.Errorf("gitops: cat-file: %w", err)
	}
	return out, nil
}

// header reads one answer's "<id> <type> <size>" line.
func (cf *catFile) header(id string) (kind string, size int64, err error) {
	line, err := cf.out.ReadString('\n')
	if err != nil {
		return "", 0, fmt.Errorf("gitops: cat-file: object %s: %w", id, err)
	}
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != id {
		return "", 0, fmt.Errorf("gitops: cat-file: object %s: %q", id, strings.TrimSpace(line))
	}
	size, err = strconv.ParseInt(f[2], 10, 64)
	if err != nil || size < 0 {
		return "", 0, fmt.Errorf("gitops: cat-file: object %s: size %q", id, f[2])
	}
	return f[1], size, nil
}

// parseTree reads a tree object's entries: "<mode> <name>\0<id>", the id
// in hashLen raw bytes.
func parseTree(b []byte, hashLen int) ([]treeEntry, error) {
	var out []treeEntry
	for len(b) > 0 {
		sp := bytes.IndexByte(b, ' ')
		nul := bytes.IndexByte(b, 0)
		if sp < 0 || nul < sp || nul+1+hashLen > len(b) {
			return nil, errors.New("gitops: malformed tree object")
		}
		out = append(out, treeEntry{mode: string(b[:sp]), id: hex.EncodeToString(b[nul+1 : nul+1+hashLen])})
		b = b[nul+1+hashLen:]
	}
	return out, nil
}
