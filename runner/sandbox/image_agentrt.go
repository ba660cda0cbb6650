package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Bind shows host directory Src read-only at Dst, a fixed path of the
// jail that is neither the host's nor the image's: the bot's agent
// runtime (runner/agentrt), which a CLI node whose image lacks the CLI
// runs from. Binds come from the bot's own configuration only.
type Bind struct{ Src, Dst string }

// fixedBinds adds j's Binds to ms, each source opened without following
// links (as every bind) after its links are resolved: the bot names it.
func (j *Jail) fixedBinds(ms []mount) ([]mount, error) {
	for _, b := range j.Binds {
		if !filepath.IsAbs(b.Src) || !filepath.IsAbs(b.Dst) || b.Dst == "/" {
			return ms, fmt.Errorf("sandbox: bind %s at %s: both must be absolute", b.Src, b.Dst)
		}
		src := canonical(b.Src)
		f, err := openAt(unix.AT_FDCWD, src, unix.RESOLVE_NO_SYMLINKS)
		if err != nil {
			return ms, fmt.Errorf("sandbox: bind %s: %w", b.Src, err)
		}
		ms = append(ms, mount{kind: mROBind, src: src, dst: filepath.Clean(b.Dst), fd: f})
	}
	return ms, nil
}

// inBinds returns the host path of p when p is in one of j's Binds.
func (j *Jail) inBinds(p string) (string, bool) {
	if j == nil || !filepath.IsAbs(p) {
		return "", false
	}
	p = filepath.Clean(p)
	for _, b := range j.Binds {
		if dst := filepath.Clean(b.Dst); within(p, dst) {
			return filepath.Join(b.Src, strings.TrimPrefix(p, dst)), true
		}
	}
	return "", false
}

// ImageHas reports whether the image of j's jails holds an executable
// file at p, links resolved within the image; false without an image.
func (j *Jail) ImageHas(p string) bool {
	if j == nil || j.Sandbox.image == nil {
		return false
	}
	return executableInImage(j.Sandbox.image.Root, p)
}

// ImageName names the image of j's jails in messages; "" without one.
func (j *Jail) ImageName() string {
	if j == nil || j.Sandbox.image == nil {
		return ""
	}
	return j.Sandbox.image.Name
}

// ImageRuns reports, as a *NotFoundError, whether name runs in j's image
// as the image has it: found on env's PATH (or at its path), and a
// script's #! interpreter there too (a CLI installed with npm in an image
// without node does not). Nil without an image.
func (j *Jail) ImageRuns(env []string, dir, name string) error {
	if j == nil || j.Sandbox.image == nil {
		return nil
	}
	p, err := j.lookPathImage(env, dir, name)
	if err != nil {
		return err
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	im := j.Sandbox.image
	if j.inWritable(p) || !executableInImage(im.Root, p) {
		return nil // the worktree's own, or a host program the jail binds (lookPathImage checked it)
	}
	f, err := openInImage(im.Root, p)
	if err != nil {
		return nil
	}
	defer f.Close()
	head := make([]byte, 2)
	if _, err := f.ReadAt(head, 0); err != nil || string(head) != "#!" {
		return nil
	}
	path, _ := Lookup(env, "PATH")
	if err := interpreterFits(im, f, path); err != nil {
		return &NotFoundError{Name: name, Image: im.Name, Reason: "the image's copy is a script, and " + err.Error()}
	}
	return nil
}

// openInImage opens p inside the image tree root, following links as if
// root were "/".
func openInImage(root, p string) (*os.File, error) {
	rf, err := openAt(unix.AT_FDCWD, root, unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_MAGICLINKS)
	if err != nil {
		return nil, err
	}
	defer rf.Close()
	how := unix.OpenHow{Flags: unix.O_RDONLY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS}
	fd, err := unix.Openat2(int(rf.Fd()), strings.TrimPrefix(filepath.Clean(p), "/"), &how)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), p), nil
}
