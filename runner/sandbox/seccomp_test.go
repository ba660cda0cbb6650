package sandbox

import (
	"strings"
	"testing"
)

// A node cannot leave a setuid or setgid file behind, whichever way it
// tries (chmod, cp --preserve, a file created with the bit, a 32-bit
// program where one can run), in a cold or a prewarmed jail; it still
// chmods and creates files as it likes otherwise, and io_uring and
// openat2 say they are not there.
func TestJailRefusesSetIDBits(t *testing.T) {
	script := `set -u
cp /usr/bin/id ./x
chmod 4755 ./x 2>&1 || echo chmod-suid-refused
chmod 2755 ./x 2>&1 || echo chmod-sgid-refused
chmod u+s ./x 2>&1 || echo chmod-us-refused
chmod 0750 ./x && echo chmod-plain-ok
python3 - <<'PY'
import os, errno, ctypes
def tryit(name, f):
    try:
        f(); print(name + "-allowed")
    except OSError as e:
        print(name + "-" + errno.errorcode[e.errno])
tryit("open-suid", lambda: os.close(os.open("y", os.O_CREAT | os.O_WRONLY, 0o4755)))
tryit("open-plain", lambda: os.close(os.open("z", os.O_CREAT | os.O_WRONLY, 0o755)))
tryit("fchmod-suid", lambda: os.fchmod(os.open("z", os.O_RDONLY), 0o4755))
tryit("chmod-at-suid", lambda: os.chmod("z", 0o6755, follow_symlinks=False) if os.chmod in os.supports_follow_symlinks else os.chmod("z", 0o6755))
tryit("mknod-suid", lambda: os.mknod("w", 0o104755))
libc = ctypes.CDLL(None, use_errno=True)
r = libc.syscall(425, 8, ctypes.c_void_p(0))  # io_uring_setup on x86_64
print("io_uring-" + (errno.errorcode[ctypes.get_errno()] if r < 0 else "allowed"))
PY
for f in x y z w; do [ -e "$f" ] && stat -c "%n %a" "$f"; done
true`
	for _, tc := range []struct {
		name string
		s    *Sandbox
	}{{"cold", coldSandbox(t, Config{})}, {"prewarmed", newTestSandbox(t, Config{})}} {
		t.Run(tc.name, func(t *testing.T) {
			j := &Jail{Sandbox: tc.s, Workspace: t.TempDir()}
			var out combined
			stdout, stderr := out.writers()
			c := Cmd{Argv: []string{"bash", "-c", script}, Dir: j.Workspace, Env: jailEnv(), Stdout: stdout, Stderr: stderr, Jail: j}
			Prewarm(c)
			res, err := Run(t.Context(), c)
			if err != nil || res.ExitCode != 0 {
				t.Fatalf("Run: %v %+v\n%s", err, res, out.String())
			}
			got := out.String()
			for _, want := range []string{"chmod-suid-refused", "chmod-sgid-refused", "chmod-us-refused", "chmod-plain-ok",
				"open-suid-EPERM", "open-plain-allowed", "fchmod-suid-EPERM", "chmod-at-suid-EPERM", "mknod-suid-EPERM",
				"io_uring-ENOSYS", "x 750", "z 755"} {
				if !strings.Contains(got, want) {
					t.Errorf("want %q in the node's output:\n%s", want, got)
				}
			}
			for _, line := range strings.Split(got, "\n") {
				if f := strings.Fields(line); len(f) == 2 && len(f[1]) == 4 && f[1][0] != '0' {
					t.Errorf("a set-id file was left: %s", line)
				}
			}
		})
	}
}

// The filter links (every jump within reach) and is what bwrap can load:
// a whole number of instructions, ending in a return.
func TestSeccompFilterAssembles(t *testing.T) {
	prog, err := seccompFilter()
	if err != nil {
		t.Fatal(err)
	}
	if len(prog) == 0 || len(prog) > 4096 {
		t.Fatalf("%d instructions", len(prog))
	}
	if last := prog[len(prog)-1]; last.Code != bpfRet {
		t.Errorf("the program ends with %+v, not a return", last)
	}
}
