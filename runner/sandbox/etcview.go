package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
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

// etcView returns the /etc that nodes see, a directory under stateDir: a
// copy of every entry of etc that any user may read, without the hidden
// paths, and with the jail's own passwd and group, and resolv.conf
// holding resolv unless it is nil (network public's name server: one bind
// less for each start than a file bound over the view's). Inside the user
// namespace of a bot running as root the jail user owns root's files, so
// /etc/shadow, private keys and the like must not be there at all; they
// are simply absent here. One bind of this directory replaces a bind of
// /etc, a mask per unreadable entry and two identity files: every mount
// costs each start time.
//
// The view is named after a fingerprint of etc (every entry's inode, mode,
// size and times), so Sandboxes of the same state dir share it while /etc
// is unchanged, and a Sandbox made after a change gets a new one. A
// Sandbox holds a shared lock on its view through the returned file, which
// it keeps for its life (closing it, or losing it to the garbage
// collector, releases the lock); a view nobody holds is removed by the
// next Sandbox made.
func etcView(stateDir, etc string, hidden []string, resolv []byte) (string, *os.File, error) {
	if err := os.MkdirAll(stateDir, 0o755); err != nil {
		return "", nil, fmt.Errorf("sandbox: state dir: %w", err)
	}
	fp, err := fingerprint(etc, hidden, resolv)
	if err != nil {
		return "", nil, fmt.Errorf("sandbox: /etc view: %w", err)
	}
	dir := filepath.Join(stateDir, "etc-"+fp)
	lock, err := holdView(dir + ".lock")
	if err != nil {
		return "", nil, fmt.Errorf("sandbox: /etc view: %w", err)
	}
	removeUnusedViews(stateDir, dir)
	if err := ensureView(stateDir, dir, etc, hidden, resolv); err != nil {
		lock.Close()
		return "", nil, fmt.Errorf("sandbox: /etc view: %w", err)
	}
	return dir, lock, nil
}

// ensureView builds the view at dir unless it is there.
func ensureView(stateDir, dir, etc string, hidden []string, resolv []byte) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	tmp, err := os.MkdirTemp(stateDir, fmt.Sprintf("etc-tmp-%d-", os.Getpid()))
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // gone after the rename; the leftover of a failure
	if err := buildView(tmp, etc, hidden, resolv); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(dir); statErr != nil {
			return err
		} // another Sandbox built it meanwhile
	}
	return nil
}

func buildView(dir, etc string, hidden []string, resolv []byte) error {
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	if err := copyReadable(etc, dir, hidden); err != nil {
		return err
	}
	if err := writeResolvConf(dir, etc, resolv); err != nil {
		return err
	}
	return writeIdentity(dir)
}

// writeResolvConf makes the view's resolv.conf a regular file holding
// resolv, or else a copy of what the host's names: the host's is often a
// link into /run (systemd-resolved), which nodes do not see.
func writeResolvConf(dir, etc string, resolv []byte) error {
	body := resolv
	if body == nil {
		var err error
		if body, err = os.ReadFile(filepath.Join(etc, "resolv.conf")); err != nil {
			body = nil // none, or unreadable: an empty one
		}
	}
	p := filepath.Join(dir, "resolv.conf")
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return os.WriteFile(p, body, 0o644)
}

// fingerprint identifies the state of every entry below etc, the hidden
// paths among them, and the resolv.conf given for the view.
func fingerprint(etc string, hidden []string, resolv []byte) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "view 2 uid %d\n", JailUID)
	if resolv != nil {
		fmt.Fprintf(h, "resolv.conf given %x\n", sha256.Sum256(resolv))
	} else if body, err := os.ReadFile(filepath.Join(etc, "resolv.conf")); err == nil {
		fmt.Fprintf(h, "resolv.conf %x\n", sha256.Sum256(body)) // it may be a link to a file elsewhere
	}
	for _, p := range hidden {
		if within(p, etc) {
			fmt.Fprintf(h, "hidden %s\n", p)
		}
	}
	err := filepath.WalkDir(etc, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			fmt.Fprintf(h, "%s error\n", p) // an unreadable directory: its mode says so
			return nil
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			return nil
		}
		fmt.Fprintf(h, "%s %d %o %d %d.%d %d.%d\n", p, st.Ino, st.Mode, st.Size,
			st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec)
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))[:16], err
}

// holdView takes a shared lock on the view's lock file and returns the
// file that holds it: no other Sandbox removes the view while it is open.
func holdView(lockPath string) (*os.File, error) {
	for {
		f, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
			f.Close()
			return nil, err
		}
		// A Sandbox removing the view may have unlinked the lock file
		// while this one waited for it: lock the file that is there now.
		var held, now syscall.Stat_t
		if syscall.Fstat(int(f.Fd()), &held) == nil && syscall.Stat(lockPath, &now) == nil && held.Ino == now.Ino {
			return f, nil
		}
		f.Close()
	}
}

// removeUnusedViews removes the views in stateDir other than keep that no
// Sandbox holds, and the unfinished views of processes that are gone.
func removeUnusedViews(stateDir, keep string) {
	ents, _ := os.ReadDir(stateDir)
	for _, e := range ents {
		p := filepath.Join(stateDir, e.Name())
		if rest, ok := strings.CutPrefix(e.Name(), "etc-tmp-"); ok {
			pid, err := strconv.Atoi(strings.SplitN(rest, "-", 2)[0])
			if err == nil && errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
				os.RemoveAll(p)
			}
			continue
		}
		view, ok := strings.CutSuffix(p, ".lock")
		if !ok || !strings.HasPrefix(e.Name(), "etc-") || view == keep {
			continue
		}
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			os.RemoveAll(view)
			os.Remove(p)
		}
		f.Close()
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
