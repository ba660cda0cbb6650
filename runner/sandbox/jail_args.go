package sandbox

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// bwrapArgv is the command line of a bwrap that runs argv in a jail with
// options opts (Jail.options) and the handshake, and the files bwrap must
// get as descriptors fd and fd+1, after the handshake's and the bind
// sources: the options (--args) and the seccomp filter (seccompFile). The
// options name host paths (the worktree and run directory, the masks of
// hidden paths), and the sandbox's first process keeps bwrap's command
// line, which every process of the node may read at /proc/1/cmdline: only
// the node's own command is on it. bwrap closes the files once read.
func bwrapArgv(bwrap string, opts, argv []string, fd int) ([]string, []*os.File, error) {
	filter, err := seccompFile()
	if err != nil {
		return nil, nil, err
	}
	all := slices.Concat(opts, handshakeArgs, []string{"--seccomp", strconv.Itoa(fd + 1)})
	f, err := optionsFile(all)
	if err != nil {
		filter.Close()
		return nil, nil, err
	}
	return append([]string{bwrap, "--args", strconv.Itoa(fd), "--"}, argv...), []*os.File{f, filter}, nil
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
	return memFile("kilroy-bwrap-args", b.String())
}

// memFile is a memory file holding body, read from its start.
func memFile(name, body string) (*os.File, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %s: %w", name, err)
	}
	f := os.NewFile(uintptr(fd), name)
	if _, err := f.WriteString(body); err != nil {
		f.Close()
		return nil, fmt.Errorf("sandbox: %s: %w", name, err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("sandbox: %s: %w", name, err)
	}
	return f, nil
}
