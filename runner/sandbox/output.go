package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// copyBuffers hold the buffers pipes are copied through, reused: a node
// runs a few processes with two pipes each, and a new buffer per pipe was
// most of what a node allocated (the garbage collector ran every seven
// nodes of a chain of `true`). Writers do not keep the slice they are
// given (io.Writer), so a buffer is free again when deliver returns.
var copyBuffers = sync.Pool{New: func() any { return new([copyBufferSize]byte) }}

const copyBufferSize = 32 << 10

// drainAfterKill bounds the wait for the last output of a lingering group
// once it has been killed.
const drainAfterKill = 500 * time.Millisecond

// output connects the caller's writers to the child through pipes Run owns
// (rather than exec's), so Run decides how long to wait for them and can
// kill the group before giving up on them.
type output struct {
	pipes []*pipe
	wg    sync.WaitGroup
	done  chan struct{}
}

type pipe struct {
	name string
	dst  io.Writer
	r, w *os.File // w is nil once the child has the only write end
	// copyErr is written by the copying goroutine only, and read after
	// output.done is closed.
	copyErr error
}

// attachOutput sets cmd.Stdout and cmd.Stderr. A nil writer goes to the
// null device and an *os.File is handed to the child directly, as exec
// does; anything else gets a pipe. The same writer for both gets one pipe,
// so the two streams interleave as the child wrote them.
func attachOutput(cmd *exec.Cmd, stdout, stderr io.Writer) (*output, error) {
	o := &output{done: make(chan struct{})}
	var err error
	if cmd.Stdout, err = o.connect("stdout", stdout); err != nil {
		return nil, err
	}
	if sameWriter(stdout, stderr) {
		cmd.Stderr = cmd.Stdout
		return o, nil
	}
	if cmd.Stderr, err = o.connect("stderr", stderr); err != nil {
		o.abort()
		return nil, err
	}
	return o, nil
}

// pipedOutput connects the caller's writers (nil discards) to the read
// ends of pipes the process got when it was started (a prewarmed jail's).
func pipedOutput(stdoutR, stderrR *os.File, stdout, stderr io.Writer) *output {
	return &output{done: make(chan struct{}), pipes: []*pipe{
		{name: "stdout", dst: orDiscard(stdout), r: stdoutR},
		{name: "stderr", dst: orDiscard(stderr), r: stderrR},
	}}
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

func (o *output) connect(name string, dst io.Writer) (io.Writer, error) {
	if dst == nil {
		return nil, nil
	}
	if f, ok := dst.(*os.File); ok {
		return f, nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("%s pipe: %w", name, err)
	}
	o.pipes = append(o.pipes, &pipe{name: name, dst: dst, r: r, w: w})
	return w, nil
}

// sameWriter reports whether a and b are the same writer. Comparing
// interfaces panics for non-comparable dynamic types, which are then
// simply not the same.
func sameWriter(a, b io.Writer) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a != nil && a == b
}

// abort releases the pipes of a process that never started.
func (o *output) abort() {
	for _, p := range o.pipes {
		p.r.Close()
		if p.w != nil {
			p.w.Close()
		}
	}
}

// start closes the parent's write ends, so a pipe reaches EOF once every
// process of the group has closed it, and starts copying.
func (o *output) start() {
	for _, p := range o.pipes {
		if p.w != nil {
			p.w.Close()
		}
		o.wg.Go(p.deliver)
	}
	go func() {
		o.wg.Wait()
		close(o.done)
	}()
}

// deliver copies the child's output to the caller's writer. After a write error it keeps reading
// and discards, so the child does not die of SIGPIPE because a log file
// filled up; Run reports the error.
func (p *pipe) deliver() {
	bp := copyBuffers.Get().(*[copyBufferSize]byte)
	defer copyBuffers.Put(bp)
	buf := bp[:]
	var werr error
	for {
		n, rerr := p.r.Read(buf)
		if n > 0 && werr == nil {
			var m int
			if m, werr = p.dst.Write(buf[:n]); werr == nil && m < n {
				werr = io.ErrShortWrite
			}
			if werr != nil {
				p.copyErr = fmt.Errorf("write %s: %w", p.name, werr)
			}
		}
		if rerr != nil {
			if !errors.Is(rerr, io.EOF) && !errors.Is(rerr, os.ErrClosed) && p.copyErr == nil {
				p.copyErr = fmt.Errorf("read %s: %w", p.name, rerr)
			}
			return
		}
	}
}

// finish runs after the main process has exited. It waits up to delay for
// the output to reach EOF, kills the group either way (leftover background
// processes must not outlive the node), and closes the pipes. It reports
// whether some process still held a pipe after delay. When finish returns,
// nothing writes to the caller's writers any more.
func (o *output) finish(delay time.Duration, killGroup func()) (lingered bool) {
	lingered = !o.wait(delay)
	killGroup()
	if lingered {
		// The killed processes' ends close at once; only one that escaped
		// the group can hold a pipe past drainAfterKill.
		o.wait(drainAfterKill)
	}
	for _, p := range o.pipes {
		p.r.Close() // unblocks a pending Read, if any
	}
	<-o.done
	return lingered
}

func (o *output) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-o.done:
		return true
	case <-t.C:
		return false
	}
}

func (o *output) err() error {
	var errs []error
	for _, p := range o.pipes {
		errs = append(errs, p.copyErr)
	}
	return errors.Join(errs...)
}
