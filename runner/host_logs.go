package runner

import (
	"errors"

	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
)

// nodeLogs are the two log files of a node process. They are created on a
// goroutine of their own while the process starts (a new file costs a few
// hundred microseconds on some disks, as much as a third of a quick
// node), and writes wait until they exist. A log that cannot be created
// fails the process's Exec once it ends: its output is lost, the node
// fails on an infrastructure error and nothing of what it changed is
// hidden from the checkpoint.
type nodeLogs struct {
	ready          chan struct{}
	stdout, stderr *sandbox.CappedFile
	err            error
}

func openNodeLogs(stdoutPath, stderrPath string, max int64) *nodeLogs {
	l := &nodeLogs{ready: make(chan struct{})}
	go func() {
		defer close(l.ready)
		var errOut, errErr error
		l.stdout, errOut = sandbox.NewCappedFile(stdoutPath, max)
		l.stderr, errErr = sandbox.NewCappedFile(stderrPath, max)
		l.err = errors.Join(errOut, errErr)
	}()
	return l
}

// writers are the process's stdout and stderr.
func (l *nodeLogs) writers() (stdout, stderr logWriter) {
	return logWriter{l, false}, logWriter{l, true}
}

// close waits for the files, closes them and reports whether they could
// be created and written.
func (l *nodeLogs) close() error {
	<-l.ready
	var errs []error
	for _, f := range []*sandbox.CappedFile{l.stdout, l.stderr} {
		if f != nil {
			errs = append(errs, f.Close())
		}
	}
	return errors.Join(append([]error{l.err}, errs...)...)
}

type logWriter struct {
	l      *nodeLogs
	stderr bool
}

func (w logWriter) Write(p []byte) (int, error) {
	<-w.l.ready
	f := w.l.stdout
	if w.stderr {
		f = w.l.stderr
	}
	if f == nil {
		return 0, w.l.err
	}
	return f.Write(p)
}
