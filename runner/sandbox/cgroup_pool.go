package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// spareCgroups is how many node cgroup pairs a Sandbox keeps made ahead of
// need: making one (two mkdirs and their settings) would otherwise cost
// each start a few hundred microseconds.
const spareCgroups = 2

// take returns a fresh cgroup pair for one node, a spare one when there is
// one, and has the spares made up again in the background.
func (r *cgroupRoot) take() (*nodeCgroup, error) {
	if r == nil {
		return nil, nil
	}
	defer r.refill()
	select {
	case cg := <-r.spare:
		return cg, nil
	default:
		return r.create()
	}
}

// refill makes spares until there are spareCgroups, in one goroutine at a
// time.
func (r *cgroupRoot) refill() {
	if !r.filling.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer r.filling.Store(false)
		for len(r.spare) < cap(r.spare) {
			cg, err := r.create()
			if err != nil {
				return // take makes its own and says why
			}
			select {
			case r.spare <- cg:
			default:
				cg.remove()
				return
			}
		}
	}()
}

// removeStale removes, in the background, the cgroups that bot processes
// which are gone left behind: the spares of a bot that exited, whatever a
// crash left.
func (r *cgroupRoot) removeStale() {
	var stale nodeCgroup
	for _, root := range []string{r.pids, r.memory} {
		ents, _ := os.ReadDir(root)
		for _, e := range ents {
			rest, ok := strings.CutPrefix(e.Name(), "kilroy-")
			rest = strings.TrimPrefix(rest, "probe-")
			pid, err := strconv.Atoi(strings.SplitN(rest, "-", 2)[0])
			if ok && err == nil && e.IsDir() && errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
				stale.dirs = append(stale.dirs, filepath.Join(root, e.Name()))
			}
		}
	}
	if len(stale.dirs) > 0 {
		go stale.remove()
	}
}
