package secrets

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// Redacted replaces a secret in a scrubbed file.
const Redacted = "[REDACTED]"

// ScrubTree rewrites every regular file under dir that holds a form of one
// of values (those of at least MinLen bytes), each form replaced by
// Redacted; the rest of the file is kept. A file is replaced, never
// written through, so that a hard link to a file elsewhere is not changed.
// A file that cannot be rewritten is removed. Links are left alone: a
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
	fi, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("scrub %s: %w", path, err)
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
