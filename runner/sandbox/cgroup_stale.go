package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// staleAfter is how long a node cgroup of another process must have been
// empty-looking (no member, the directory that old) before removeStale
// takes it: a live process joins the cgroup it makes within milliseconds.
const staleAfter = time.Minute

// removeStale removes, in the background, the cgroups that bot processes
// which are gone left behind: the prewarmed jails of a bot that exited,
// whatever a crash left. A cgroup is named at random (cgroupName), so
// whose it was is not in its name: one this process did not make that
// has no member and is older than staleAfter is stale. Names of the
// earlier form, kilroy-PID-SEQ, are stale when PID is gone.
func (r *cgroupRoot) removeStale() {
	var stale nodeCgroup
	for _, root := range []string{r.pids, r.memory} {
		ents, _ := os.ReadDir(root)
		for _, e := range ents {
			name := e.Name()
			if !e.IsDir() || !strings.HasPrefix(name, "kilroy-") {
				continue
			}
			if staleCgroup(filepath.Join(root, name)) {
				stale.dirs = append(stale.dirs, filepath.Join(root, name))
			}
		}
	}
	if len(stale.dirs) > 0 {
		go stale.remove()
	}
}

// staleCgroup says whether the node cgroup dir is left over.
func staleCgroup(dir string) bool {
	name := filepath.Base(dir)
	if _, ours := cgroupOwned.Load(name); ours {
		return false
	}
	rest := strings.TrimPrefix(strings.TrimPrefix(name, "kilroy-"), "probe-")
	if head, _, numbered := strings.Cut(rest, "-"); numbered || strings.HasPrefix(name, "kilroy-probe-") {
		pid, err := strconv.Atoi(head)
		return err == nil && errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
	}
	st, err := os.Stat(dir)
	if err != nil || time.Since(st.ModTime()) < staleAfter {
		return false
	}
	procs, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	return err == nil && len(strings.TrimSpace(string(procs))) == 0
}
