package secrets

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// Redacted replaces a secret in a scrubbed file.
const Redacted = "[REDACTED]"

// MaxRewrite is the largest file ScrubTree rewrites in memory; a larger
// one is read in chunks and, if it holds a secret, removed.
const MaxRewrite = 8 << 20

// ScrubTree rewrites every regular file under dir that holds a form of one
// of values (those of at least MinLen bytes), each form replaced by
// Redacted; the rest of the file is kept. A file is replaced, never
// written through, so that a hard link to a file elsewhere is not changed.
// A file that cannot be rewritten is removed, and so is one over
// MaxRewrite bytes that holds a secret. Links are left alone: a
// link's target is outside what is scrubbed. The error names every file
// that could not be scrubbed (removed, or not even that).
func ScrubTree(dir string, values []string) error {
	forms := scrubForms(values)
	if len(forms) == 0 {
		return nil
	}
	var errs []error
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			errs = append(errs, err)
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if err := scrubFile(p, forms); err != nil {
			if rmErr := os.Remove(p); rmErr != nil {
				err = fmt.Errorf("%w; not removed either: %w", err, rmErr)
			} else {
				err = fmt.Errorf("%w; removed", err)
			}
			errs = append(errs, err)
		}
		return nil
	})
	return errors.Join(append(errs, err)...)
}

// scrubForms are the forms of every value long enough to be a secret,
// longest first so that no form is cut by a shorter one.
func scrubForms(values []string) [][]byte {
	var out [][]byte
	for _, v := range values {
		if len(v) < MinLen {
			continue
		}
		for _, f := range Forms(v) {
			out = append(out, []byte(f))
		}
	}
	slices.SortFunc(out, func(x, y []byte) int { return cmp.Compare(len(y), len(x)) })
	return out
}

func scrubFile(path string, forms [][]byte) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("scrub %s: %w", path, err)
	}
	if fi.Size() > MaxRewrite {
		// A node may leave a file as big as its file-size limit: the bot
		// does not hold it in memory; one that holds a secret goes whole.
		found, err := holdsForm(path, forms)
		if err != nil {
			return fmt.Errorf("scrub %s: %w", path, err)
		}
		if found {
			return fmt.Errorf("scrub %s: %d bytes holding a secret, over the %d bytes rewritten in place", path, fi.Size(), int64(MaxRewrite))
		}
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("scrub %s: %w", path, err)
	}
	out := b
	for _, f := range forms {
		out = bytes.ReplaceAll(out, f, []byte(Redacted))
	}
	if bytes.Equal(out, b) {
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".scrub-*")
	if err != nil {
		return fmt.Errorf("scrub %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // gone after the rename; removes a failed one
	_, err = tmp.Write(out)
	err = errors.Join(err, tmp.Chmod(fi.Mode().Perm()), tmp.Close())
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("scrub %s: %w", path, err)
	}
	return nil
}

// holdsForm reads path in chunks, each searched with the tail of the one
// before it, so that a form across two chunks is found.
func holdsForm(path string, forms [][]byte) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	longest := len(forms[0]) // forms are sorted longest first
	buf := make([]byte, 0, 1<<20+longest)
	chunk := make([]byte, 1<<20)
	for {
		n, err := f.Read(chunk)
		buf = append(buf, chunk[:n]...)
		for _, form := range forms {
			if bytes.Contains(buf, form) {
				return true, nil
			}
		}
		if len(buf) >= longest {
			buf = append(buf[:0], buf[len(buf)-longest+1:]...)
		}
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
}
