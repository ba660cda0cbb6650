package sandbox

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// bwrapArgv is the command line of a bwrap that runs argv in a jail with
// options opts (Jail.options) and the handshake, and the file bwrap reads
// those options from (--args), which it must get as descriptor fd: after
// the handshake's and the bind sources. The options name host paths (the
// worktree and run directory, the masks of hidden paths), and the
// sandbox's first process keeps bwrap's command line, which every process
// of the node may read at /proc/1/cmdline: only the node's own command is
// on it. bwrap closes the file once read.
func bwrapArgv(bwrap string, opts, argv []string, fd int) ([]string, *os.File, error) {
	f, err := optionsFile(append(opts[:len(opts):len(opts)], handshakeArgs...))
	if err != nil {
		return nil, nil, err
	}
	return append([]string{bwrap, "--args", strconv.Itoa(fd), "--"}, argv...), f, nil
}

// optionsFile is a memory file holding opts, NUL-terminated, read from its
// start.
func optionsFile(opts []string) (*os.File, error) {
	var b strings.Builder
	for _, o := range opts {
		if strings.IndexByte(o, 0) >= 0 {
			return nil, fmt.Errorf("sandbox: a jail option holds a NUL byte: %q", o)
		}
		b.WriteString(o)
		b.WriteByte(0)
	}
	fd, err := unix.MemfdCreate("kilroy-bwrap-args", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("sandbox: jail options: %w", err)
	}
	f := os.NewFile(uintptr(fd), "kilroy-bwrap-args")
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return nil, fmt.Errorf("sandbox: jail options: %w", err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("sandbox: jail options: %w", err)
	}
	return f, nil
}
