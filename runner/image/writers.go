package image

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Writing a layer's small regular files is handed to a few goroutines:
// creating a file costs the kernel far more than anything else unpacking
// does (on ext4, most of a pull), and creations in different directories
// run in parallel while the tar stream is read and decompressed. The
// unpacker reads each file's content (counting it against MaxBytes) and
// keeps every other change to the tree (directories, links, removals) to
// itself, in layer order: before any change that could meet a file still
// being written (the same path or one below it, a removal, a whiteout, a
// hard link), it waits for all of them.
const (
	fileWriters   = 3
	fileQueue     = 64
	asyncFileSize = 256 << 10 // larger files are written in place, streamed
)

// fileJob creates one regular file, name in dir (which it holds), with
// its content, mode and modification time.
type fileJob struct {
	dir   *dirHandle
	name  string
	rel   string
	mode  uint32 // permission and sticky bits
	mtime unix.Timespec
	data  *[]byte
}

type writers struct {
	jobs    chan *fileJob
	running sync.WaitGroup // jobs submitted and not done
	exited  sync.WaitGroup // the goroutines
	failed  atomic.Bool
	mu      sync.Mutex
	err     error           // the first job's failure
	pending map[string]bool // paths of jobs since the last wait; the unpacker's
	bufs    sync.Pool
	umask   uint32
}

func newWriters() *writers {
	w := &writers{jobs: make(chan *fileJob, fileQueue), pending: map[string]bool{}, umask: processUmask()}
	w.exited.Add(fileWriters)
	for range fileWriters {
		go func() {
			defer w.exited.Done()
			for j := range w.jobs {
				if !w.failed.Load() {
					if err := w.run(j, nil); err != nil {
						w.fail(err)
					}
				}
				j.dir.release()
				w.bufs.Put(j.data)
				w.running.Done()
			}
		}()
	}
	return w
}

func (w *writers) fail(err error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.mu.Unlock()
	w.failed.Store(true)
}

// stop waits for the jobs under way, then ends the goroutines.
func (w *writers) stop() {
	w.wait()
	close(w.jobs)
	w.exited.Wait()
}

// wait waits until every job submitted is done and returns the first
// failure.
func (w *writers) wait() error {
	w.running.Wait()
	clear(w.pending)
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// meets reports whether a change at rel could meet a job not known done:
// one at rel itself or at a directory above it.
func (w *writers) meets(rel string) bool {
	if len(w.pending) == 0 {
		return false
	}
	for rel != "" {
		if w.pending[rel] {
			return true
		}
		rel, _ = split(rel)
	}
	return false
}

// buffer returns a buffer of n bytes for a job's content.
func (w *writers) buffer(n int) *[]byte {
	b, _ := w.bufs.Get().(*[]byte)
	if b == nil || cap(*b) < n {
		s := make([]byte, n, max(n, 16<<10))
		return &s
	}
	*b = (*b)[:n]
	return b
}

// submit queues a job for the goroutines. It reports a job's failure
// seen so far, so that the unpacker stops early; the job is then dropped,
// its directory and buffer given back as a goroutine would.
func (w *writers) submit(j *fileJob) error {
	if w.failed.Load() {
		j.dir.release()
		w.bufs.Put(j.data)
		return w.wait()
	}
	w.pending[j.rel] = true
	w.running.Add(1)
	w.jobs <- j
	return nil
}

// run creates and writes the job's file, with its content from data or,
// when r is not nil, copied from r with buf.
func (w *writers) run(j *fileJob, r io.Reader, buf ...[]byte) (err error) {
	mode := j.mode & 0o1777
	fd, err := unix.Openat(j.dir.fd, j.name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, mode&0o777)
	if err != nil {
		return &fileError{j.rel, err}
	}
	defer func() {
		if cerr := unix.Close(fd); err == nil && cerr != nil {
			err = &fileError{j.rel, cerr}
		}
	}()
	if r != nil {
		f := fdWriter(fd)
		_, err = io.CopyBuffer(f, readerOnly{r}, buf[0])
	} else {
		err = writeFull(fd, *j.data)
	}
	// The mode given to openat lost the umask's bits and the sticky bit.
	if err == nil && (mode&^0o777 != 0 || mode&w.umask != 0) {
		err = unix.Fchmod(fd, mode)
	}
	if err == nil {
		err = unix.UtimesNanoAt(j.dir.fd, j.name, []unix.Timespec{j.mtime, j.mtime}, unix.AT_SYMLINK_NOFOLLOW)
	}
	if err != nil {
		return &fileError{j.rel, err}
	}
	return nil
}

// fileError is a job's failure, naming its file.
type fileError struct {
	rel string
	err error
}

func (e *fileError) Error() string { return fmt.Sprintf("entry %q: %v", e.rel, e.err) }
func (e *fileError) Unwrap() error { return e.err }

// fdWriter writes to a raw descriptor, which os.File would first
// inspect (another system call per file).
type fdWriter int

func (f fdWriter) Write(p []byte) (int, error) {
	if err := writeFull(int(f), p); err != nil {
		return 0, err
	}
	return len(p), nil
}

func writeFull(fd int, p []byte) error {
	for len(p) > 0 {
		n, err := unix.Write(fd, p)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return io.ErrShortWrite
		}
		p = p[n:]
	}
	return nil
}

// processUmask reads the process's umask without changing it (umask(2)
// would, for a moment, for every goroutine). Unknown, it is taken to
// strip every bit, so that every file's mode is then set explicitly.
func processUmask() uint32 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0o777
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Umask:"); ok {
			m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32)
			if err == nil {
				return uint32(m)
			}
		}
	}
	return 0o777
}
