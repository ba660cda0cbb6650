package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// devOwner owns the jail's /dev directory and what is in it (devDir): a
// user the jail's user namespace does not map (it maps JailUID alone), so
// the jail user, who owns the bot's files when the bot runs as root, owns
// nothing there and can neither write the directory nor change its
// entries.
const devOwner = 65534

// devNodes are the devices a jail's /dev holds: the four programs use.
var devNodes = []string{"null", "zero", "full", "urandom"}

// devLinks are the links a jail's /dev holds: /dev/random to urandom (the
// same device since Linux 5.6) and the descriptor links.
var devLinks = [][2]string{
	{"random", "urandom"}, {"fd", "/proc/self/fd"},
	{"stdin", "/proc/self/fd/0"}, {"stdout", "/proc/self/fd/1"}, {"stderr", "/proc/self/fd/2"},
}

// devDir makes the /dev every host jail of a bot that runs as root shows,
// in stateDir, and returns its path: the devices of devNodes (the host's,
// by device number), the links of devLinks and an empty shm (the mount
// point of shmArgs' tmpfs), all owned by devOwner, the directory mode
// 0555. One bind of it (devBindArgs) replaces a bind per device: every
// bind costs each start a pass over the mount table. "" when it cannot be
// made (a bot that is not root cannot make a device node; a state dir on
// a file system mounted nodev could not serve one): jails then bind the
// host's devices one by one (devArgs). Sandboxes of one state dir share
// it; one that is not as devDir makes it is made anew.
//
// It is bound by path, not by descriptor: bwrap has no --dev-bind-fd, and
// a descriptor it did not take as a bind source would stay open in the
// jail. The path is the bot's: the state dir is no node's to write.
func devDir(stateDir string) string {
	if os.Geteuid() != 0 {
		return ""
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(stateDir, &fs); err != nil || fs.Flags&unix.ST_NODEV != 0 {
		return ""
	}
	dir := filepath.Join(canonical(stateDir), "dev")
	if checkDevDir(dir) == nil {
		return dir
	}
	os.RemoveAll(dir)
	tmp, err := os.MkdirTemp(stateDir, "dev-tmp-")
	if err != nil {
		return ""
	}
	defer os.RemoveAll(tmp) // gone after the rename; the leftover of a failure
	if fillDevDir(tmp) != nil {
		return ""
	}
	os.Rename(tmp, dir) // fails where another Sandbox made it meanwhile
	if checkDevDir(dir) != nil {
		return ""
	}
	return dir
}

// fillDevDir makes devDir's entries in dir and then hands them and dir to
// devOwner.
func fillDevDir(dir string) error {
	var errs []error
	for _, name := range devNodes {
		var st unix.Stat_t
		if err := unix.Stat("/dev/"+name, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR {
			return fmt.Errorf("sandbox: /dev/%s is no character device", name)
		}
		p := filepath.Join(dir, name)
		errs = append(errs, unix.Mknod(p, unix.S_IFCHR|0o666, int(st.Rdev)), unix.Chmod(p, 0o666))
	}
	for _, l := range devLinks {
		errs = append(errs, os.Symlink(l[1], filepath.Join(dir, l[0])))
	}
	errs = append(errs, os.Mkdir(filepath.Join(dir, "shm"), 0o555))
	entries, err := os.ReadDir(dir)
	errs = append(errs, err)
	for _, e := range entries {
		errs = append(errs, os.Lchown(filepath.Join(dir, e.Name()), devOwner, devOwner))
	}
	errs = append(errs, os.Chmod(dir, 0o555), os.Lchown(dir, devOwner, devOwner))
	return errors.Join(errs...)
}

// checkDevDir reports how dir differs from what fillDevDir makes: each
// entry, its kind, device number, target, mode and owner, and nothing
// else there.
func checkDevDir(dir string) error {
	want := map[string]func(*unix.Stat_t, string) bool{
		".":   func(st *unix.Stat_t, _ string) bool { return st.Mode == unix.S_IFDIR|0o555 },
		"shm": func(st *unix.Stat_t, _ string) bool { return st.Mode == unix.S_IFDIR|0o555 },
	}
	for _, name := range devNodes {
		var host unix.Stat_t
		if err := unix.Stat("/dev/"+name, &host); err != nil {
			return err
		}
		want[name] = func(st *unix.Stat_t, _ string) bool {
			return st.Mode == unix.S_IFCHR|0o666 && st.Rdev == host.Rdev
		}
	}
	for _, l := range devLinks {
		want[l[0]] = func(st *unix.Stat_t, p string) bool {
			t, err := os.Readlink(p)
			return st.Mode&unix.S_IFMT == unix.S_IFLNK && err == nil && t == l[1]
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(entries)+1 != len(want) {
		return fmt.Errorf("sandbox: %s holds %d entries, want %d", dir, len(entries), len(want)-1)
	}
	for name, ok := range want {
		p := filepath.Join(dir, name)
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return err
		}
		if !ok(&st, p) || st.Uid != devOwner || st.Gid != devOwner {
			return fmt.Errorf("sandbox: %s is not as the bot made it", p)
		}
	}
	return nil
}

// devBindArgs bind dir, devDir's, at /dev, its devices usable.
func devBindArgs(dir string) []string { return []string{"--dev-bind", dir, "/dev"} }
