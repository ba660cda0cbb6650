package sandbox

import (
	"fmt"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// Limits bound what one node process tree may use. Zero fields take the
// defaults below; a negative field means unlimited.
type Limits struct {
	// Processes caps the processes and threads of the node at once (a
	// cgroup's pids.max where the bot may create cgroups, RLIMIT_NPROC
	// otherwise).
	Processes int
	// MemoryBytes caps the node's memory: the cgroup's memory limit where
	// available, and always each process's data segment (RLIMIT_DATA), so
	// one huge allocation fails at once.
	MemoryBytes int64
	// FileSizeBytes caps any file a node process writes (RLIMIT_FSIZE).
	FileSizeBytes int64
	// CPUTime caps each process's CPU time (RLIMIT_CPU).
	CPUTime time.Duration
}

// DefaultLimits are the documented defaults (docs/serve.md, "Sandbox").
var DefaultLimits = Limits{
	Processes:     512,
	MemoryBytes:   3 << 30,
	FileSizeBytes: 2 << 30,
	CPUTime:       2 * time.Hour,
}

func (l Limits) withDefaults() Limits {
	if l.Processes == 0 {
		l.Processes = DefaultLimits.Processes
	}
	if l.MemoryBytes == 0 {
		l.MemoryBytes = DefaultLimits.MemoryBytes
	}
	if l.FileSizeBytes == 0 {
		l.FileSizeBytes = DefaultLimits.FileSizeBytes
	}
	if l.CPUTime == 0 {
		l.CPUTime = DefaultLimits.CPUTime
	}
	return l
}

// set applies the limits to process pid; the processes it starts after
// inherit them.
func (l Limits) set(pid int) error {
	for _, r := range []struct {
		resource int
		value    int64
	}{
		{syscall.RLIMIT_CORE, 0},
		{rlimitNPROC, int64(l.Processes)},
		{syscall.RLIMIT_DATA, l.MemoryBytes},
		{syscall.RLIMIT_FSIZE, l.FileSizeBytes},
		{syscall.RLIMIT_CPU, int64(l.CPUTime / time.Second)},
	} {
		if r.value < 0 {
			continue // unlimited: inherited as it is
		}
		lim := syscall.Rlimit{Cur: uint64(r.value), Max: uint64(r.value)}
		_, _, errno := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, uintptr(pid), uintptr(r.resource),
			uintptr(unsafe.Pointer(&lim)), 0, 0, 0)
		if errno != 0 {
			return fmt.Errorf("sandbox: set limit %d of process %d: %w", r.resource, pid, errno)
		}
	}
	return nil
}

// rlimitNPROC is RLIMIT_NPROC, which package syscall does not name.
const rlimitNPROC = 6

// explain names the limit a failed node most likely hit, or "". The
// kernel says so for CPU time and file size (the signal); a cgroup counts
// refused forks and OOM kills; otherwise the program's own words for a
// refused fork or allocation are the evidence.
func (l Limits) explain(res Result, ev cgroupEvents, stderrTail string) string {
	t := strings.ToLower(stderrTail)
	switch {
	case res.Signal == syscall.SIGXCPU || res.ExitCode == 128+int(syscall.SIGXCPU) ||
		strings.Contains(t, "cpu time limit exceeded"):
		return fmt.Sprintf("CPU time limit reached (%s per process; sandbox.limits.cpu_time)", l.CPUTime)
	case res.Signal == syscall.SIGXFSZ || res.ExitCode == 128+int(syscall.SIGXFSZ) ||
		strings.Contains(t, "file size limit exceeded"):
		return fmt.Sprintf("file size limit reached (%s; sandbox.limits.file_size)", bytesText(l.FileSizeBytes))
	case ev.oomKills > 0:
		return fmt.Sprintf("memory limit reached (%s; sandbox.limits.memory): the kernel killed the process", bytesText(l.MemoryBytes))
	case ev.pidsMax > 0:
		return fmt.Sprintf("process limit reached (%d processes; sandbox.limits.processes)", l.Processes)
	}
	switch {
	case strings.Contains(t, "fork: resource temporarily unavailable"), strings.Contains(t, "fork: retry"),
		strings.Contains(t, "can't fork"), strings.Contains(t, "cannot fork"):
		return fmt.Sprintf("process limit reached (%d processes; sandbox.limits.processes)", l.Processes)
	case strings.Contains(t, "memoryerror"), strings.Contains(t, "cannot allocate memory"),
		strings.Contains(t, "out of memory"), strings.Contains(t, "bad_alloc"):
		return fmt.Sprintf("memory limit reached (%s; sandbox.limits.memory)", bytesText(l.MemoryBytes))
	}
	return ""
}

func bytesText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
