package sandbox

import (
	"encoding/binary"
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// The jail's seccomp filter, handed to bwrap (--seccomp FD) as a compiled
// classic BPF program. It refuses what would leave a setuid or setgid file
// behind: a node runs as root in its user namespace, and with the bot
// running as root its files are root's on the host, where the bit would
// work (bubblewrap's mounts are nosuid only inside the jail). So chmod and
// its kin, creating a file (open, creat, mknod) with either bit in the mode
// fail with EPERM; io_uring, which opens files without these system calls,
// and openat2, whose mode seccomp cannot read, fail with ENOSYS, which
// their users take as "not here" and fall back from. Everything else is
// allowed: the filter is about this one thing, not a syscall allow-list.

// Offsets in struct seccomp_data.
const (
	seccompNR   = 0
	seccompArch = 4
)

func seccompArg(i int) uint32 { return 16 + 8*uint32(i) } // low 32 bits, little-endian

const (
	bpfLdAbsW = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	bpfJeq    = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	bpfJset   = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
	bpfRet    = unix.BPF_RET | unix.BPF_K

	setidBits   = unix.S_ISUID | unix.S_ISGID
	createFlags = unix.O_CREAT | 0o20000000 // O_CREAT, __O_TMPFILE
	x32Bit      = 0x40000000                // x32 system calls on x86_64

	retAllow  = unix.SECCOMP_RET_ALLOW
	retEPERM  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	retENOSYS = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
)

// seccompRule is what the filter does with one system call: refuse it
// outright (ret), or refuse it when argument mode holds a set-id bit and,
// if flags >= 0, argument flags asks to create a file.
type seccompRule struct {
	nr          uint32
	mode, flags int // argument indexes; -1 for none
	ret         uint32
}

func modeAt(nr uint32, i int) seccompRule { return seccompRule{nr: nr, mode: i, flags: -1} }
func createAt(nr uint32, flags, mode int) seccompRule {
	return seccompRule{nr: nr, mode: mode, flags: flags}
}
func refuse(nr, ret uint32) seccompRule { return seccompRule{nr: nr, mode: -1, flags: -1, ret: ret} }

// seccompArches are the system call numbers of each architecture a node's
// program may use here: the native one and, on x86_64, i386's.
var seccompArches = []struct {
	audit uint32
	x32   bool
	rules []seccompRule
}{
	{unix.AUDIT_ARCH_X86_64, true, []seccompRule{
		modeAt(90, 1), modeAt(91, 1), modeAt(268, 2), modeAt(452, 2), // chmod fchmod fchmodat fchmodat2
		modeAt(85, 1), createAt(2, 1, 2), createAt(257, 2, 3), // creat open openat
		modeAt(133, 1), modeAt(259, 2), // mknod mknodat
		refuse(437, retENOSYS),                                                 // openat2
		refuse(425, retENOSYS), refuse(426, retENOSYS), refuse(427, retENOSYS), // io_uring_*
	}},
	{unix.AUDIT_ARCH_I386, false, []seccompRule{
		modeAt(15, 1), modeAt(94, 1), modeAt(306, 2), modeAt(452, 2),
		modeAt(8, 1), createAt(5, 1, 2), createAt(295, 2, 3),
		modeAt(14, 1), modeAt(297, 2),
		refuse(437, retENOSYS),
		refuse(425, retENOSYS), refuse(426, retENOSYS), refuse(427, retENOSYS),
	}},
	{unix.AUDIT_ARCH_AARCH64, false, []seccompRule{
		modeAt(52, 1), modeAt(53, 2), modeAt(452, 2), // fchmod fchmodat fchmodat2
		createAt(56, 2, 3), modeAt(33, 2), // openat mknodat
		refuse(437, retENOSYS),
		refuse(425, retENOSYS), refuse(426, retENOSYS), refuse(427, retENOSYS),
	}},
}

// bpfAsm assembles a classic BPF program with forward jumps to labels.
type bpfAsm struct {
	prog   []unix.SockFilter
	labels map[string]int
	fixes  []bpfFix
}

type bpfFix struct {
	at     int
	jt, jf string
}

func (a *bpfAsm) label(name string) { a.labels[name] = len(a.prog) }

func (a *bpfAsm) op(code uint16, k uint32) {
	a.prog = append(a.prog, unix.SockFilter{Code: code, K: k})
}

// jump adds a conditional jump to label jt when it holds, else jf; "" is
// the next instruction.
func (a *bpfAsm) jump(code uint16, k uint32, jt, jf string) {
	a.fixes = append(a.fixes, bpfFix{at: len(a.prog), jt: jt, jf: jf})
	a.op(code, k)
}

func (a *bpfAsm) link() ([]unix.SockFilter, error) {
	for _, f := range a.fixes {
		for _, side := range []struct {
			label string
			off   *uint8
		}{{f.jt, &a.prog[f.at].Jt}, {f.jf, &a.prog[f.at].Jf}} {
			if side.label == "" {
				continue
			}
			to, ok := a.labels[side.label]
			d := to - f.at - 1
			if !ok || d < 0 || d > 255 {
				return nil, fmt.Errorf("sandbox: seccomp: jump to %q out of reach", side.label)
			}
			*side.off = uint8(d)
		}
	}
	return a.prog, nil
}

// seccompFilter is the jail's filter, compiled.
func seccompFilter() ([]unix.SockFilter, error) {
	a := &bpfAsm{labels: map[string]int{}}
	a.op(bpfLdAbsW, seccompArch)
	for i, arch := range seccompArches {
		a.jump(bpfJeq, arch.audit, fmt.Sprint("arch", i), "")
	}
	a.op(bpfRet, retAllow) // an architecture none of these: nothing to say
	for i, arch := range seccompArches {
		a.label(fmt.Sprint("arch", i))
		a.op(bpfLdAbsW, seccompNR)
		if arch.x32 {
			a.jump(bpfJset, x32Bit, "enosys", "")
		}
		for j, r := range arch.rules {
			a.jump(bpfJeq, r.nr, fmt.Sprintf("rule%d.%d", i, j), "")
		}
		a.op(bpfRet, retAllow)
		for j, r := range arch.rules {
			a.label(fmt.Sprintf("rule%d.%d", i, j))
			switch {
			case r.ret != 0:
				a.op(bpfRet, r.ret)
			case r.flags >= 0:
				a.op(bpfLdAbsW, seccompArg(r.flags))
				a.jump(bpfJset, createFlags, "", "allow")
				fallthrough
			default:
				a.op(bpfLdAbsW, seccompArg(r.mode))
				a.jump(bpfJset, setidBits, "eperm", "allow")
			}
		}
	}
	a.label("allow")
	a.op(bpfRet, retAllow)
	a.label("eperm")
	a.op(bpfRet, retEPERM)
	a.label("enosys")
	a.op(bpfRet, retENOSYS)
	return a.link()
}

// seccompFile is a memory file holding the compiled filter, as bwrap's
// --seccomp reads it: the instructions, in the machine's byte order
// (seccompBytes).
func seccompFile() (*os.File, error) {
	b, err := seccompBytes()
	if err != nil {
		return nil, err
	}
	fd, err := unix.MemfdCreate("kilroy-seccomp", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("sandbox: seccomp filter: %w", err)
	}
	f := os.NewFile(uintptr(fd), "kilroy-seccomp")
	if _, err := f.Write(b); err == nil {
		_, err = f.Seek(0, 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("sandbox: seccomp filter: %w", err)
	}
	return f, nil
}

// seccompBytes is the compiled filter as bwrap reads it, compiled once:
// every jail gets the same.
var seccompBytes = sync.OnceValues(func() ([]byte, error) {
	prog, err := seccompFilter()
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, 8*len(prog))
	for _, ins := range prog {
		b = binary.NativeEndian.AppendUint16(b, ins.Code)
		b = append(b, ins.Jt, ins.Jf)
		b = binary.NativeEndian.AppendUint32(b, ins.K)
	}
	return b, nil
})
