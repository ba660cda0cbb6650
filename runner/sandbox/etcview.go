package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// writeEtcView writes the /etc that nodes see into a new directory under
// stateDir and returns it: a copy of every entry of etc that any user may
// read, without the hidden paths, and with the jail's own passwd and
// group. Inside the user namespace of a bot running as root the jail user
// owns root's files, so /etc/shadow, private keys and the like must not be
// there at all; they are simply absent here. One bind of this directory
// replaces a bind of /etc, a mask per unreadable entry and two identity
// files: every mount costs each start time. The copy is taken once per
// Sandbox: nodes see /etc as it was when the bot started.
func writeEtcView(stateDir, etc string, hidden []string) (string, error) {
	if err := os.MkdirAll(stateDir, 0o755); err != nil {
		return "", fmt.Errorf("sandbox: state dir: %w", err)
	}
	removeStaleViews(stateDir)
	dir, err := os.MkdirTemp(stateDir, fmt.Sprintf("etc-%d-", os.Getpid()))
	if err != nil {
		return "", fmt.Errorf("sandbox: /etc view: %w", err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return "", fmt.Errorf("sandbox: /etc view: %w", err)
	}
	if err := copyReadable(etc, dir, hidden); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("sandbox: /etc view: %w", err)
	}
	if err := writeIdentity(dir); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// removeStaleViews removes the /etc views of bot processes that are gone.
func removeStaleViews(stateDir string) {
	ents, _ := os.ReadDir(stateDir)
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), "etc-")
		pid, err := strconv.Atoi(strings.SplitN(rest, "-", 2)[0])
		if !ok || err != nil || !e.IsDir() {
			continue
		}
		if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			os.RemoveAll(filepath.Join(stateDir, e.Name()))
		}
	}
}

// copyReadable copies the world-readable entries below src into dst:
// files with read permission for others, directories with read and search
// permission for others, symlinks as they are. Anything else (and any
// hidden path) is left out, as is a file that cannot be read.
func copyReadable(src, dst string, hidden []string) error {
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range ents {
		from, to := filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())
		if isHidden(from, hidden) {
			continue
		}
		fi, err := os.Lstat(from)
		if err != nil {
			continue
		}
		if err := copyEntry(from, to, fi, hidden); err != nil {
			return err
		}
	}
	return nil
}

func copyEntry(from, to string, fi fs.FileInfo, hidden []string) error {
	perm := fi.Mode().Perm()
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(from)
		if err != nil {
			return nil
		}
		return os.Symlink(target, to)
	case fi.IsDir() && perm&0o005 == 0o005:
		if err := os.Mkdir(to, 0o755); err != nil {
			return err
		}
		if err := copyReadable(from, to, hidden); err != nil {
			return err
		}
		return os.Chmod(to, perm|0o700) // the owner may remove it later
	case fi.Mode().IsRegular() && perm&0o004 != 0:
		return copyFile(from, to, perm)
	}
	return nil
}

func copyFile(from, to string, perm fs.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return nil // unreadable after all: left out, as a mask would
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func isHidden(p string, hidden []string) bool {
	for _, h := range hidden {
		if within(p, h) {
			return true
		}
	}
	return false
}
