package gitops

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// tidyTree undoes, in a worktree about to be reused, what git's own clean
// and reset do not see: a `.git` below the top (git skips every entry of
// that name, so `clean -ffdx` keeps it inside a tracked directory and
// status never shows it), a file hard-linked to one outside (reset keeps a
// file whose content matches, and a write through it would reach the
// other name), and permissions a checkout would not give (a directory the
// next run could not enter, a file it could not read, set-id bits).
// Symlinks are never followed: git replaces or removes them itself.
// Permissions are set to what a checkout gives: 0777 for directories and
// executable files and 0666 for others, less the process's umask.
func tidyTree(worktree string) error {
	mask := umask()
	top := filepath.Join(worktree, ".git") // rewritten by the caller
	return filepath.WalkDir(worktree, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == top {
			return nil
		}
		if d.Name() == ".git" {
			if err := os.RemoveAll(p); err != nil {
				return fmt.Errorf("remove nested %s: %w", p, err)
			}
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		switch t := d.Type(); {
		case t.IsDir():
			return fixMode(p, d, 0o777&^mask)
		case t.IsRegular():
			return tidyFile(p, d, mask)
		}
		return nil
	})
}

func tidyFile(p string, d fs.DirEntry, mask fs.FileMode) error {
	fi, err := d.Info()
	if err != nil {
		return err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
		if err := os.Remove(p); err != nil {
			return fmt.Errorf("remove hard-linked %s: %w", p, err)
		}
		return nil
	}
	want := 0o666 &^ mask
	if fi.Mode()&0o100 != 0 { // git checks the owner's bit
		want = 0o777 &^ mask
	}
	return fixMode(p, d, want)
}

// umask is the process's file mode creation mask, read from
// /proc/self/status (setting it to read it would race with other
// goroutines creating files); 022 where that cannot be read.
func umask() fs.FileMode {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0o022
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Umask:"); ok {
			if m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
				return fs.FileMode(m) & fs.ModePerm
			}
		}
	}
	return 0o022
}

// fixMode sets p's permissions to want unless they are want already.
func fixMode(p string, d fs.DirEntry, want fs.FileMode) error {
	fi, err := d.Info()
	if err != nil {
		return err
	}
	if fi.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) == want {
		return nil
	}
	if err := os.Chmod(p, want); err != nil {
		return fmt.Errorf("reset permissions of %s: %w", p, err)
	}
	return nil
}
