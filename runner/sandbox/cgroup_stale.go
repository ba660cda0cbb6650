package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// removeStale removes, in the background, the cgroups that bot processes
// which are gone left behind: the prewarmed jails of a bot that exited,
// whatever a crash left.
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
