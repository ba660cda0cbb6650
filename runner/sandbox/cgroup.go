package sandbox

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// cgroupRoot holds the cgroup v1 hierarchies the bot may create children
// in. With them a node's processes are counted and its memory capped as a
// whole, and the bot learns which limit ended a node. Without them (cgroup
// v2 without delegation, a read-only cgroupfs) rlimits alone apply.
type cgroupRoot struct {
	pids, memory string
	limits       Limits
}

var cgroupSeq atomic.Uint64

// findCgroupRoot returns the writable v1 pids and memory hierarchies of
// this process's cgroups, for nodes under limits l, or nil.
func findCgroupRoot(l Limits) *cgroupRoot {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return nil
	}
	defer f.Close()
	r := &cgroupRoot{limits: l}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, ctrl := range strings.Split(parts[1], ",") {
			dir := filepath.Join("/sys/fs/cgroup", parts[1], parts[2])
			switch ctrl {
			case "pids":
				r.pids = probeCgroup(dir, "pids.max")
			case "memory":
				r.memory = probeCgroup(dir, "memory.limit_in_bytes")
			}
		}
	}
	if r.pids == "" {
		return nil // the process count is what rlimits cannot bound for root
	}
	r.removeStale()
	return r
}

// probeCgroup returns dir when a child cgroup with the given control file
// can be created in it.
func probeCgroup(dir, control string) string {
	probe := filepath.Join(dir, fmt.Sprintf("kilroy-probe-%d", os.Getpid()))
	if err := os.Mkdir(probe, 0o755); err != nil && !os.IsExist(err) {
		return ""
	}
	defer os.Remove(probe)
	if _, err := os.Stat(filepath.Join(probe, control)); err != nil {
		return ""
	}
	return dir
}

// nodeCgroup is the cgroup pair of one process tree.
type nodeCgroup struct {
	dirs []string
}

type cgroupEvents struct {
	pidsMax  int // forks refused at pids.max
	oomKills int // processes the kernel killed at the memory limit
}

// create makes the cgroup pair of one node. Its pids.max is the process
// limit plus headroom: the processes of the node's tree that are not the
// node's (none today: bwrap joins no cgroup itself).
func (r *cgroupRoot) create(headroom int) (*nodeCgroup, error) {
	if r == nil {
		return nil, nil
	}
	l := r.limits
	name := fmt.Sprintf("kilroy-%d-%d", os.Getpid(), cgroupSeq.Add(1))
	cg := &nodeCgroup{}
	add := func(root string, settings map[string]string) error {
		dir := filepath.Join(root, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			return err
		}
		cg.dirs = append(cg.dirs, dir)
		for file, v := range settings {
			if err := os.WriteFile(filepath.Join(dir, file), []byte(v), 0o644); err != nil {
				return err
			}
		}
		return nil
	}
	pidsMax := "max"
	if l.Processes > 0 {
		pidsMax = strconv.Itoa(l.Processes + headroom)
	}
	if err := add(r.pids, map[string]string{"pids.max": pidsMax}); err != nil {
		cg.remove()
		return nil, fmt.Errorf("sandbox: cgroup: %w", err)
	}
	if r.memory != "" && l.MemoryBytes > 0 {
		if err := add(r.memory, map[string]string{"memory.limit_in_bytes": strconv.FormatInt(l.MemoryBytes, 10)}); err != nil {
			cg.remove()
			return nil, fmt.Errorf("sandbox: cgroup: %w", err)
		}
	}
	return cg, nil
}

// join moves process pid into the node's cgroups; the processes it starts
// after are born inside.
func (cg *nodeCgroup) join(pid int) error {
	if cg == nil {
		return nil
	}
	for _, d := range cg.dirs {
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
			return fmt.Errorf("sandbox: join cgroup: %w", err)
		}
	}
	return nil
}

// finish ends the node's cgroups. After a clean exit (status 0, no
// signal) there is nothing to read or kill: bwrap's monitor exited
// normally, which it does only once the node's pid namespace is empty (its
// init ends last, after the kernel has killed the rest). Otherwise it
// reads what the cgroups counted, for LimitHit, and kills anything left in
// them at once. Either way the cgroups are removed in the background.
func (cg *nodeCgroup) finish(clean bool) cgroupEvents {
	var ev cgroupEvents
	if cg == nil {
		return ev
	}
	for _, d := range cg.dirs {
		if !clean {
			ev.pidsMax += readCounter(filepath.Join(d, "pids.events"), "max")
			ev.oomKills += readCounter(filepath.Join(d, "memory.oom_control"), "oom_kill")
			killAll(filepath.Join(d, "cgroup.procs"))
		}
	}
	go cg.remove()
	return ev
}

func (cg *nodeCgroup) remove() {
	for _, d := range cg.dirs {
		for range 50 {
			killAll(filepath.Join(d, "cgroup.procs"))
			if err := os.Remove(d); err == nil || os.IsNotExist(err) {
				break
			}
			time.Sleep(10 * time.Millisecond) // the kernel reaps killed members asynchronously
		}
	}
}

func killAll(procs string) {
	b, err := os.ReadFile(procs)
	if err != nil {
		return
	}
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 1 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

func readCounter(file, key string) int {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k == key {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}
