package gitops

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// tidyTree makes the worktree at dir hold nothing but what its index idx
// tracks, and says whether every tracked file is still the one git last
// recorded (clean): then git need not look at the unchanged ones again.
//
// Everything the index does not track is removed, as `git clean -ffdx`
// would, and also what git's own clean and reset do not see: a `.git`
// below the top (git skips every entry of that name, so clean keeps it
// inside a tracked directory and status never shows it), the content of a
// gitlink's directory (a fresh checkout leaves it empty), and directory
// permissions a checkout would not give (a directory the next run could
// not enter, set-id bits). A tracked file is removed, for git to write
// anew, when it is not exactly what git recorded: another type, a mode a
// checkout would not give (wrong executable bit, set-id bits, unreadable),
// hard-linked (a write through it would reach a file outside, and reset
// keeps a file whose content matches), or stat data (ctime and mtime to
// the nanosecond, inode, owner, size) other than the index's. A file git
// would call racily clean (modified when the index was written or later,
// to the nanosecond as git built with USE_NSEC judges it) is compared by
// content. Permissions are what a checkout
// gives: 0777 for directories and executable files and 0666 for others,
// less the process's umask.
//
// Nothing is reached through a symlink: directories are opened relative
// to their parent without following links, and removals and chmods go
// through an os.Root of the worktree. The top's .git is the caller's.
func tidyTree(dir string, idx *workIndex) (clean bool, err error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return false, err
	}
	defer root.Close()
	t := newTidier(root, idx)
	if err := t.fixDirMode(".", dir); err != nil {
		return false, err
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	if err := t.run(fd); err != nil {
		return false, err
	}
	return !t.dirty.Load() && t.seen.Load() == int64(len(idx.entries)), nil
}

// tidier is one tidyTree: workers take directories from jobs.
type tidier struct {
	root    *os.Root
	entries []indexEntry
	paths   map[string]int32 // tracked path → its entry, or trackedDir
	racy    time.Time        // entries modified then or later are racily clean
	dirPerm uint32           // permissions of a directory, a file and an executable
	perm    map[uint32]uint32

	seen  atomic.Int64 // entries found on disk
	dirty atomic.Bool  // a tracked file was removed

	jobs    chan dirJob
	pending sync.WaitGroup
	mu      sync.Mutex
	err     error
}

// trackedDir marks in tidier.paths a directory of tracked paths.
const trackedDir = -1

// dirJob is an open directory to tidy, at rel from the top ("" for it).
type dirJob struct {
	fd  int
	rel string
}

func newTidier(root *os.Root, idx *workIndex) *tidier {
	mask := uint32(umask())
	t := &tidier{root: root, entries: idx.entries, racy: idx.mtime,
		paths:   make(map[string]int32, len(idx.entries)*9/8),
		dirPerm: 0o777 &^ mask,
		perm:    map[uint32]uint32{modeFile: 0o666 &^ mask, modeExec: 0o777 &^ mask}}
	for i, e := range idx.entries {
		t.paths[e.path] = int32(i)
		for p := e.path; ; {
			j := strings.LastIndexByte(p, '/')
			if j < 0 || t.paths[p[:j]] == trackedDir {
				break
			}
			p = p[:j]
			t.paths[p] = trackedDir
		}
	}
	return t
}

// run tidies the directory fd (the top) and everything below it, on as
// many workers as there are CPUs to run them, and closes fd.
func (t *tidier) run(fd int) error {
	t.jobs = make(chan dirJob, 256)
	t.pending.Add(1)
	t.jobs <- dirJob{fd: fd}
	go func() {
		t.pending.Wait()
		close(t.jobs)
	}()
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), 8) {
		wg.Go(func() {
			for j := range t.jobs {
				t.dir(j)
			}
		})
	}
	wg.Wait()
	return t.err
}

// queue hands a directory to a worker, or tidies it here when all are
// busy and the queue is full (which bounds the open descriptors).
func (t *tidier) queue(j dirJob) {
	t.pending.Add(1)
	select {
	case t.jobs <- j:
	default:
		t.dir(j)
	}
}

func (t *tidier) fail(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err == nil {
		t.err = err
	}
}

func (t *tidier) failed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err != nil
}

// dir tidies the entries of the directory j and queues its subdirectories.
func (t *tidier) dir(j dirJob) {
	defer t.pending.Done()
	f := os.NewFile(uintptr(j.fd), j.rel)
	defer f.Close()
	if t.failed() {
		return
	}
	names, err := f.Readdirnames(-1)
	if err != nil {
		t.fail(fmt.Errorf("read directory %q: %w", j.rel, err))
		return
	}
	key := make([]byte, 0, 256) // rel/name, looked up without allocating
	if j.rel != "" {
		key = append(append(key, j.rel...), '/')
	}
	seen := 0
	defer func() { t.seen.Add(int64(seen)) }()
	for _, name := range names {
		if j.rel == "" && name == ".git" {
			continue
		}
		key = append(key, name...)
		tracked, err := t.entry(j.fd, name, key)
		key = key[:len(key)-len(name)]
		if err != nil {
			t.fail(err)
			return
		}
		if tracked {
			seen++
		}
	}
}

// entry tidies name in the directory fd; key is its path from the top.
// It says whether name is a tracked path.
func (t *tidier) entry(fd int, name string, key []byte) (bool, error) {
	i, ok := t.paths[string(key)]
	if !ok {
		return false, t.remove(string(key)) // untracked or ignored
	}
	var st unix.Stat_t
	if err := fstatat(fd, name, &st); errors.Is(err, unix.ENOENT) {
		return false, nil
	} else if err != nil {
		return false, &fs.PathError{Op: "lstat", Path: string(key), Err: err}
	}
	if i == trackedDir {
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			t.dirty.Store(true) // what git tracks below it is missing
			return false, t.remove(string(key))
		}
		return false, t.subdir(fd, name, string(key), &st, t.queue)
	}
	keep, err := t.unchanged(fd, name, key, &st, &t.entries[i])
	if err != nil || keep {
		return true, err
	}
	t.dirty.Store(true)
	return true, t.remove(string(key))
}

// subdir opens the directory name of fd (at p, with stat data st) after
// setting its permissions and hands it to next.
func (t *tidier) subdir(fd int, name, p string, st *unix.Stat_t, next func(dirJob)) error {
	if st.Mode&0o7777 != t.dirPerm {
		if err := t.fixDirMode(p, p); err != nil {
			return err
		}
	}
	cfd, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: p, Err: err}
	}
	next(dirJob{fd: cfd, rel: p})
	return nil
}

func (t *tidier) fixDirMode(rel, shown string) error {
	if err := t.root.Chmod(rel, fs.FileMode(t.dirPerm)); err != nil {
		return fmt.Errorf("reset permissions of %s: %w", shown, err)
	}
	return nil
}

// remove deletes p and everything below it; a directory a run made
// unreadable or unwritable is opened up first.
func (t *tidier) remove(p string) error {
	if err := t.root.RemoveAll(p); err == nil {
		return nil
	}
	if err := t.openUp(p); err != nil {
		return fmt.Errorf("remove %s: %w", p, err)
	}
	if err := t.root.RemoveAll(p); err != nil {
		return fmt.Errorf("remove %s: %w", p, err)
	}
	return nil
}

// openUp gives the owner full access to every directory at or below p.
func (t *tidier) openUp(p string) error {
	fi, err := t.root.Lstat(p)
	if err != nil || !fi.IsDir() {
		return err
	}
	if err := t.root.Chmod(p, 0o700); err != nil {
		return err
	}
	f, err := t.root.Open(p)
	if err != nil {
		return err
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return err
	}
	for _, n := range names {
		if err := t.openUp(p + "/" + n); err != nil {
			return err
		}
	}
	return nil
}

func fstatat(fd int, name string, st *unix.Stat_t) error {
	for {
		err := unix.Fstatat(fd, name, st, unix.AT_SYMLINK_NOFOLLOW)
		if err != unix.EINTR {
			return err
		}
	}
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
