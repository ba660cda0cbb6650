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
	// the child's ends (fds 3 and 4 in bwrap) and the bot's
	blockR, infoW *os.File
	blockW, infoR *os.File
}

func newJailStart(s *Sandbox) (*jailStart, error) {
	js := &jailStart{limits: s.limits}
	var err error
	if js.blockR, js.blockW, err = os.Pipe(); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	if js.infoR, js.infoW, err = os.Pipe(); err != nil {
		js.close()
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	if js.cg, err = s.cgroups.take(); err != nil {
		js.close()
		return nil, err
	}
	return js, nil
}

// childFiles are the descriptors bwrap inherits, as fds 3 and 4.
func (js *jailStart) childFiles() []*os.File { return []*os.File{js.blockR, js.infoW} }

// release waits for bwrap's report, puts the sandbox's first process under
// the limits and in the node's cgroups, and lets it go on. errNoSandbox
// means bwrap failed before it made the sandbox (it exits saying why, and
// ran nothing of the node); any other error means the caller must kill it.
func (js *jailStart) release() error {
	js.blockR.Close()
	js.infoW.Close()
	js.blockR, js.infoW = nil, nil
	defer func() {
		js.blockW.Close()
		js.infoR.Close()
	}()
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
	if _, err := js.blockW.Write([]byte{'\n'}); err != nil {
		return fmt.Errorf("sandbox: release the sandbox: %w", err)
	}
	return nil
}

// errNoSandbox: bwrap exited before it reported a sandbox.
var errNoSandbox = errors.New("bubblewrap made no sandbox")

func (js *jailStart) close() {
	for _, f := range []*os.File{js.blockR, js.blockW, js.infoR, js.infoW} {
		if f != nil {
			f.Close()
		}
	}
}
