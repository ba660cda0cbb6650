package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// Mount points in an image. A jail on an image binds the tree read-only at
// "/" and mounts its own directories on top (image_root.go); where the
// image lacks one of their mount points, the directory on its way is
// split, at a bind per entry each start. The image store therefore gives
// every tree it unpacks the jail's mount points first (AddMountPoints), as
// container engines do in a rootfs, and such a tree is bound once, whole.
// Only what is missing is added, and only where every directory on its
// way is a real directory of the image: nothing the image holds is
// replaced or changed, and nothing is made through a link.

// MountPoint is a path the jail mounts something at in an image.
type MountPoint struct {
	Path string
	// Dir: a directory; else a regular file, or a link when Link is set.
	Dir bool
	// Link is the target of a symbolic link the jail makes there.
	Link string
}

// The agent runtime's places in a jail (runner/agentrt): its node_modules
// and the directory of its ported programs and libraries.
const (
	AgentRuntimePath = kilroyDir + "/agent-runtime"
	AgentModulesPath = AgentRuntimePath + "/node_modules"
	AgentLibPath     = kilroyDir + "/lib"
)

// varTmp is the jail's /var/tmp, a link to its private /tmp (plan).
var varTmp = MountPoint{Path: "/var/tmp", Link: "/tmp"}

// MountPoints are the mount points the jail's fixed paths need in an
// image: the run's directories (jail_view.go), the agent runtime's, HOME,
// /tmp and /var/tmp, /proc, /dev with its devices, links and /dev/shm
// (devArgs, shmArgs), and the files bound over /etc (passwd and group,
// resolv.conf with network public).
func MountPoints() []MountPoint {
	var out []MountPoint
	for _, d := range []string{"/proc", "/tmp", "/dev/shm", WorkspacePath, StagePath, ManagedRootsPath, CachePath,
		GitPath, HomePath, AgentModulesPath, AgentLibPath} {
		out = append(out, MountPoint{Path: d, Dir: true})
	}
	for _, f := range []string{"/etc/passwd", "/etc/group", "/etc/resolv.conf"} {
		out = append(out, MountPoint{Path: f})
	}
	return append(append(out, devMountPoints()...), varTmp)
}

// devMountPoints are the mount points devArgs need in /dev: a file for
// every device of devNodes, a link for every link of devLinks.
func devMountPoints() []MountPoint {
	var ps []MountPoint
	for _, n := range devNodes {
		ps = append(ps, MountPoint{Path: "/dev/" + n})
	}
	for _, l := range devLinks {
		ps = append(ps, MountPoint{Path: "/dev/" + l[0], Link: l[1]})
	}
	return ps
}

// AddMountPoints gives the image tree at root the MountPoints it lacks:
// empty directories and files, and links. Missing directories on the way
// are made; a link or anything but a directory on the way leaves that
// mount point out (the jail splits around it). It returns the paths it
// made, sorted; it writes nothing else.
func AddMountPoints(root string) (added []string, err error) {
	rf, err := openAt(unix.AT_FDCWD, root, unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_MAGICLINKS)
	if err != nil {
		return nil, err
	}
	defer rf.Close()
	for _, mp := range MountPoints() {
		if added, err = addMountPoint(int(rf.Fd()), mp, added); err != nil {
			return added, fmt.Errorf("sandbox: mount point %s in %s: %w", mp.Path, root, err)
		}
	}
	slices.Sort(added)
	return slices.Compact(added), nil
}

// addMountPoint makes mp below root, a directory descriptor, where it is
// missing, and appends what it made to added. A directory of the image
// the bot may not write (a bot that is not root, and a mode without the
// owner's write bit, which the store keeps) leaves mp out: the jail splits
// around it, as on a tree unpacked before.
func addMountPoint(root int, mp MountPoint, added []string) ([]string, error) {
	added, err := makeMountPoint(root, mp, added)
	if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) {
		return added, nil
	}
	return added, err
}

// makeMountPoint is addMountPoint, but for its refusals.
func makeMountPoint(root int, mp MountPoint, added []string) ([]string, error) {
	names := strings.Split(strings.Trim(filepath.Clean(mp.Path), "/"), "/")
	dir, err := unix.Dup(root)
	if err != nil {
		return added, err
	}
	defer func() { unix.Close(dir) }()
	at := ""
	for i, name := range names {
		at += "/" + name
		last := i == len(names)-1
		var st unix.Stat_t
		err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		switch {
		case err == nil && last:
			return added, nil // the image has it: whatever it is, it stays
		case err == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR:
			return added, nil // a link or a file on the way: nothing through it
		case err == nil:
		case !errors.Is(err, unix.ENOENT):
			return added, err
		case last && mp.Link != "":
			return append(added, at), unix.Symlinkat(mp.Link, dir, name)
		case last && !mp.Dir:
			fd, err := unix.Openat(dir, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
			if err != nil {
				return added, err
			}
			return append(added, at), unix.Close(fd)
		default:
			if err := unix.Mkdirat(dir, name, 0o755); err != nil {
				return added, err
			}
			added = append(added, at)
		}
		if last {
			return added, nil
		}
		next, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return added, err
		}
		unix.Close(dir)
		dir = next
	}
	return added, nil
}
