package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// jailStart is the handshake with one bwrap: it reports the pid of the
// sandbox's first process on info and waits on block until release.
type jailStart struct {
	limits Limits
	cg     *nodeCgroup
	// prepared: prepare has run (a prewarmed jail's), release only lets
	// the sandbox go on.
	prepared bool
	// the child's ends (fds 3 and 4 in bwrap) and the bot's
	blockR, infoW *os.File
	blockW, infoR *os.File
	// net is the hold on the run's network namespace the sandbox is in
	// (network.go); given back when the jail ends.
	net *netLease
}

// newJailStart makes the handshake's pipes and the node's cgroups, whose
// pids.max has headroom for processes of bwrap that are not the node's.
func newJailStart(s *Sandbox, headroom int) (*jailStart, error) {
	js := &jailStart{limits: s.limits}
	var err error
	if js.blockR, js.blockW, err = os.Pipe(); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	if js.infoR, js.infoW, err = os.Pipe(); err != nil {
		js.close()
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	if js.cg, err = s.cgroups.create(headroom); err != nil {
		js.close()
		return nil, err
	}
	return js, nil
}

// childFiles are the descriptors bwrap inherits, as fds 3 and 4.
func (js *jailStart) childFiles() []*os.File { return []*os.File{js.blockR, js.infoW} }

// closeChildEnds closes the bot's copies of the child's ends once bwrap
// has them, so that the bot sees EOF on info when bwrap exits.
func (js *jailStart) closeChildEnds() {
	for _, f := range []*os.File{js.blockR, js.infoW} {
		if f != nil {
			f.Close()
		}
	}
	js.blockR, js.infoW = nil, nil
}

// release prepares the sandbox, unless that was done ahead (a prewarmed
// jail), and lets it go on. errNoSandbox means bwrap failed before it
// made the sandbox (it exits saying why, and ran nothing of the node); any
// other error means the caller must kill it.
func (js *jailStart) release() error {
	defer func() {
		js.blockW.Close()
		js.infoR.Close()
	}()
	if !js.prepared {
		if err := js.prepare(); err != nil {
			return err
		}
	}
	if _, err := js.blockW.Write([]byte{'\n'}); err != nil {
		return fmt.Errorf("sandbox: release the sandbox: %w", err)
	}
	return nil
}

// prepare waits for bwrap's report and puts the sandbox's first process,
// still blocked, under the limits and in the node's cgroups. Its errors
// are release's.
func (js *jailStart) prepare() error {
	js.closeChildEnds()
	var info struct {
		ChildPID int `json:"child-pid"`
	}
	// The decoder stops at the end of the object: bwrap keeps the info
	// descriptor open for as long as the sandbox runs.
	if err := json.NewDecoder(io.LimitReader(js.infoR, 4<<10)).Decode(&info); err != nil || info.ChildPID <= 0 {
		return errNoSandbox
	}
	if err := js.limits.set(info.ChildPID); err != nil {
		return err
	}
	if err := js.cg.join(info.ChildPID); err != nil {
		return err
	}
	js.prepared = true
	return nil
}

// errNoSandbox: bwrap exited before it reported a sandbox.
var errNoSandbox = errors.New("bubblewrap made no sandbox")

func (js *jailStart) close() {
	js.net.release()
	for _, f := range []*os.File{js.blockR, js.blockW, js.infoR, js.infoW} {
		if f != nil {
			f.Close()
		}
	}
}

// abort ends the handshake of a bwrap that was not started or is gone,
// and removes its cgroups.
func (js *jailStart) abort() {
	js.close()
	if js.cg != nil {
		go js.cg.remove()
	}
}
