package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// newTestSandbox returns a Sandbox, or skips saying why bubblewrap cannot
// run here.
func newTestSandbox(t *testing.T, cfg Config) *Sandbox {
	t.Helper()
	if cfg.PATH == "" {
		cfg.PATH = HostEnv()["PATH"]
	}
	if cfg.Network == "" {
		// No run's network namespace (pasta) unless a test asks for one:
		// network_test.go asks for public.
		cfg.Network = NetworkNone
	}
	if cfg.StateDir == "" {
		// Shared by the tests (and test runs): they then share one view of
		// /etc, as the Sandboxes of one bot do, instead of copying /etc
		// each.
		cfg.StateDir = filepath.Join(os.TempDir(), "kilroy-sandbox-test-state")
	}
	s, err := New(cfg)
	if err != nil {
		t.Skipf("sandbox unavailable: %v", err)
	}
	if err := s.SelfTest(context.Background()); err != nil {
		t.Skipf("sandbox unavailable: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

func jailEnv() []string {
	h := HostEnv()
	return NodeEnv(EnvSpec{Host: map[string]string{"PATH": h["PATH"], "HOME": h["HOME"]}})
}

// jailRun runs script with sh in j's workspace and returns the result and
// the combined output (stdout's and stderr's lines interleaved in no fixed
// order).
func jailRun(t *testing.T, ctx context.Context, j *Jail, script string) (Result, string) {
	t.Helper()
	var out combined
	stdout, stderr := out.writers()
	res, err := Run(ctx, Cmd{
		Argv: []string{"sh", "-c", script}, Dir: j.Workspace, Env: jailEnv(),
		Stdout: stdout, Stderr: stderr, Jail: j, KillGrace: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res, out.String()
}

// A node sees its workspace and nothing of the data dir around it: not the
// key file, not another run, not the bot's own processes or environment.
func TestJailHidesTheBotsFiles(t *testing.T) {
	// A process of the bot's user with a secret in its environment, as the
	// bot itself has (/proc/PID/environ shows the environment at exec).
	bot := exec.Command("sleep", "60")
	bot.Env = []string{"KILROY_WEBHOOK_SECRET=CANARY-ENV-7f3a"}
	if err := bot.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bot.Process.Kill(); bot.Wait() })
	dataDir := t.TempDir()
	keyFile := filepath.Join(dataDir, "app.pem")
	os.WriteFile(keyFile, []byte("CANARY-KEY"), 0o600)
	other := filepath.Join(dataDir, "runs", "other", "log.txt")
	os.MkdirAll(filepath.Dir(other), 0o755)
	os.WriteFile(other, []byte("CANARY-OTHER"), 0o644)
	ws := filepath.Join(dataDir, "runs", "mine", "worktree")
	os.MkdirAll(ws, 0o755)
	s := newTestSandbox(t, Config{Hidden: []string{dataDir}})
	j := &Jail{Sandbox: s, Workspace: ws}
	res, out := jailRun(t, context.Background(), j, `
		cat `+keyFile+` `+other+` 2>/dev/null; echo "at: $(pwd)"; ls -d `+dataDir+`/runs 2>/dev/null
		cat /proc/[0-9]*/environ 2>/dev/null | tr '\0' '\n' | grep CANARY
		cat /etc/shadow 2>/dev/null | head -1
		echo "uid: $(id -u) $(id -un)"; echo written > in-worktree.txt && echo wrote`)
	if res.ExitCode != 0 {
		t.Fatalf("exit %d: %s", res.ExitCode, out)
	}
	for _, canary := range []string{"CANARY-KEY", "CANARY-OTHER", "CANARY-ENV", "root:", dataDir} {
		if strings.Contains(out, canary) {
			t.Errorf("node saw %q:\n%s", canary, out)
		}
	}
	for _, want := range []string{"at: " + WorkspacePath + "\n", "uid: 1000 kilroy\n", "wrote\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "in-worktree.txt")); string(b) != "written\n" {
		t.Errorf("worktree file = %q", b)
	}
}

// No process a node starts outlives it: not a setsid daemon, not a double
// fork, not nohup; also not after a timeout or a cancellation.
func TestJailKillsEveryProcessWithTheNode(t *testing.T) {
	s := newTestSandbox(t, Config{})
	for _, tt := range []struct {
		name string
		end  string // how the main process ends once released
	}{
		{"exit", "exit 0"},
		{"timeout", "sleep 600"},
		{"cancel", "sleep 600"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			token := fmt.Sprintf("kilroy-daemon-%d-%s", os.Getpid(), tt.name)
			j := &Jail{Sandbox: s, Workspace: t.TempDir()}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var timeout time.Duration
			if tt.name == "timeout" {
				timeout = 3 * time.Second
			}
			// The main process waits for the test to see its four daemons
			// before it ends, so the test cannot pass on daemons that never
			// started.
			script := fmt.Sprintf(`
				setsid bash -c 'exec -a %[1]s-setsid sleep 1000' </dev/null >/dev/null 2>&1 &
				( ( exec -a %[1]s-double sleep 1000 ) & ) </dev/null >/dev/null 2>&1
				nohup bash -c 'exec -a %[1]s-nohup sleep 1000' </dev/null >/dev/null 2>&1 &
				trap '' TERM HUP; bash -c 'trap "" TERM; exec -a %[1]s-stubborn sleep 1000' </dev/null >/dev/null 2>&1 &
				while [ ! -e release ]; do sleep 0.05; done
				%[2]s`, token, tt.end)
			done := make(chan error, 1)
			go func() {
				_, err := Run(ctx, Cmd{Argv: []string{"bash", "-c", script}, Dir: j.Workspace, Env: jailEnv(), Jail: j,
					Timeout: timeout, KillGrace: 200 * time.Millisecond})
				done <- err
			}()
			waitDaemons(t, token, 4)
			switch tt.name {
			case "cancel":
				cancel()
			default:
				os.WriteFile(filepath.Join(j.Workspace, "release"), nil, 0o644)
			}
			if err := <-done; err != nil {
				t.Fatalf("Run: %v", err)
			}
			waitNoProcess(t, token)
		})
	}
}

// waitDaemons waits until n processes named token-* (their argv[0]) run.
func waitDaemons(t *testing.T, token string, n int, output ...func() string) {
	t.Helper()
	deadline := time.Now().Add(pollDeadline)
	for {
		got := 0
		files, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil && bytes.HasPrefix(b, []byte(token+"-")) {
				got++
			}
		}
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			var out string
			for _, o := range output {
				out += o()
			}
			t.Fatalf("%d of the node's %d daemons started\n%s", got, n, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitNoProcess fails unless no process whose command line holds token is
// left within a few seconds (the kernel reaps a dead namespace quickly but
// not synchronously).
func waitNoProcess(t *testing.T, token string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := processesWith(token)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes outlived their node: %v", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func processesWith(token string) []string {
	var out []string
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range dirs {
		b, err := os.ReadFile(f)
		if err == nil && bytes.Contains(b, []byte(token)) {
			out = append(out, strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}

// The repository metadata is read-only inside the jail: a node can read
// history but cannot redirect the bot's git (.git, commondir) or plant
// config, attributes or hooks in the shared repository.
func TestJailGitMetadataIsReadOnly(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	s := newTestSandbox(t, Config{})
	root := t.TempDir()
	mirror, ws := filepath.Join(root, "mirror.git"), filepath.Join(root, "wt")
	gitRun(t, "", "init", "-q", "--bare", mirror)
	seed := filepath.Join(root, "seed")
	gitRun(t, "", "init", "-q", seed)
	os.WriteFile(filepath.Join(seed, "a.txt"), []byte("a\n"), 0o644)
	gitRun(t, seed, "add", "a.txt")
	gitRun(t, seed, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "a")
	gitRun(t, seed, "push", "-q", mirror, "HEAD:refs/heads/main")
	gitRun(t, mirror, "worktree", "add", "-q", ws, "main")
	before := snapshot(t, mirror)
	j := &Jail{Sandbox: s, Workspace: ws}
	res, out := jailRun(t, context.Background(), j, `
		git log --oneline | wc -l
		echo evil >> .git && echo WROTE-DOTGIT
		rm -f .git && echo REMOVED-DOTGIT
		gitdir=$(sed 's/^gitdir: //' .git)
		echo /tmp > "$gitdir/commondir" && echo WROTE-COMMONDIR
		printf '[filter "x"]\n\tclean = touch /tmp/pwned\n' >> "$gitdir/../../config" && echo WROTE-CONFIG
		echo '* filter=x' > "$gitdir/../../info/attributes" && echo WROTE-ATTRIBUTES
		echo 'touch pwned' > "$gitdir/../../hooks/pre-commit" && echo WROTE-HOOK
		echo ok > a.txt && echo WROTE-WORKTREE`)
	if res.ExitCode != 0 {
		t.Fatalf("exit %d: %s", res.ExitCode, out)
	}
	for _, bad := range []string{"WROTE-DOTGIT", "REMOVED-DOTGIT", "WROTE-COMMONDIR", "WROTE-CONFIG", "WROTE-ATTRIBUTES", "WROTE-HOOK"} {
		if strings.Contains(out, bad) {
			t.Errorf("node could do %s:\n%s", bad, out)
		}
	}
	// stdout and stderr reach out through two pipes, so their lines
	// interleave in no fixed order: look for git log's count as a line.
	historyRead := slices.ContainsFunc(strings.Split(out, "\n"), func(l string) bool { return strings.TrimSpace(l) == "1" })
	if !historyRead || !strings.Contains(out, "WROTE-WORKTREE") {
		t.Errorf("want git history readable and the worktree writable:\n%s", out)
	}
	if after := snapshot(t, mirror); after != before {
		t.Errorf("the shared repository changed:\nbefore %s\nafter  %s", before, after)
	}
}

func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// snapshot lists the config, attribute and hook files of a repository.
func snapshot(t *testing.T, repo string) string {
	var b strings.Builder
	for _, f := range []string{"config", "info/attributes", "hooks/pre-commit"} {
		data, _ := os.ReadFile(filepath.Join(repo, f))
		fmt.Fprintf(&b, "%s=%q ", f, data)
	}
	return b.String()
}

// A fork bomb and a 4 GiB allocation fail the node, saying which limit
// they reached, whether its jail was prewarmed or cold; the bot
// (this test process) goes on forking.
func TestJailLimits(t *testing.T) {
	cfg := Config{Limits: Limits{Processes: 64}}
	for _, path := range []struct {
		name string
		s    *Sandbox
	}{{"prewarmed", newTestSandbox(t, cfg)}, {"cold", coldSandbox(t, cfg)}} {
		s := path.s
		for _, tt := range []struct {
			name, script, want string
		}{
			{"fork bomb", `bomb() { bomb | bomb & }; bomb; sleep 3; for i in $(seq 200); do sleep 5 & done; wait`, "process limit reached (64 processes"},
			{"memory", `python3 -c 'b = bytearray(4 << 30); print(len(b))' || perl -e '$x = "a" x (4 << 30); print length $x'`, "memory limit reached (3 GiB"},
			{"file size", `head -c 3000000000 /dev/zero > big.bin`, "file size limit reached (2 GiB"},
		} {
			t.Run(path.name+"/"+tt.name, func(t *testing.T) {
				if tt.name == "fork bomb" && !s.ProcessLimitHolds() {
					t.Skip("the process limit cannot hold here: the tests run as root and no cgroup is writable")
				}
				j := &Jail{Sandbox: s, Workspace: t.TempDir()}
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				var out combined
				stdout, stderr := out.writers()
				// A sandbox lost to a regression must fail the test, not bomb the machine.
				script := `[ "$(hostname)" = kilroy-sandbox ] || { echo UNJAILED; exit 99; }; ` + tt.script
				c := Cmd{Argv: []string{"bash", "-c", script}, Dir: j.Workspace, Env: jailEnv(),
					Stdout: stdout, Stderr: stderr, Jail: j}
				Prewarm(c)
				res, err := Run(ctx, c)
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				if want := path.name == "prewarmed"; res.prewarmed != want {
					t.Errorf("prewarmed: %v, want %v", res.prewarmed, want)
				}
				if res.ExitCode == 0 {
					t.Fatalf("want a failure, got exit 0:\n%s", tail(out.String()))
				}
				if got := res.LimitHit(tail(out.String())); !strings.Contains(got, tt.want) {
					t.Errorf("LimitHit = %q, want %q; output:\n%s", got, tt.want, tail(out.String()))
				}
				if err := exec.Command("true").Run(); err != nil {
					t.Errorf("the bot cannot fork after the node: %v", err)
				}
			})
		}
	}
}

func tail(s string) string {
	if len(s) > 4096 {
		return s[len(s)-4096:]
	}
	return s
}

// sandbox.network none leaves a node only its own loopback, and so does
// public as far as the host's loopback goes; host shares the host's
// network (network_test.go has the rest).
func TestJailNetwork(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	script := fmt.Sprintf(`(echo > /dev/tcp/127.0.0.1/%d) 2>/dev/null && echo CONNECTED || echo REFUSED`, port)
	for _, tt := range []struct {
		network Network
		want    string
	}{{NetworkHost, "CONNECTED"}, {NetworkNone, "REFUSED"}, {NetworkPublic, "REFUSED"}} {
		s := newTestSandbox(t, Config{Network: tt.network})
		j := &Jail{Sandbox: s, Workspace: t.TempDir()}
		var out bytes.Buffer
		if _, err := Run(context.Background(), Cmd{Argv: []string{"bash", "-c", script}, Dir: j.Workspace,
			Env: jailEnv(), Stdout: &out, Stderr: &out, Jail: j}); err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(out.String()); got != tt.want {
			t.Errorf("network %s: got %q, want %q", tt.network, got, tt.want)
		}
	}
}

// Where bubblewrap is refused (user namespaces off, a container's seccomp
// profile), the self-test's message names the setting that fixes it.
func TestNamespaceHint(t *testing.T) {
	for msg, want := range map[string]string{
		"bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces": "kernel.unprivileged_userns_clone=1",
		"bwrap: setting up uid map: Permission denied":                      "apparmor_restrict_unprivileged_userns",
		"bwrap: Failed to make / slave: Operation not permitted":            "seccomp=unconfined",
		"bwrap: Can't mount proc on /newroot/proc: Operation not permitted": "systempaths=unconfined",
		"bwrap: Creating new namespace failed: Operation not permitted":     "user.max_user_namespaces",
	} {
		if got := namespaceHint(msg); !strings.Contains(got, want) {
			t.Errorf("namespaceHint(%q) = %q, want it to name %q", msg, got, want)
		}
	}
}

// The private /tmp holds at most half the memory limit, a mask one page; the
// node's TMPDIR is that /tmp whatever the host's was.
func TestJailTmpIsBounded(t *testing.T) {
	ws := t.TempDir()
	hidden := filepath.Join(ws, "hidden") // inside a bind: masked
	os.MkdirAll(hidden, 0o755)
	s := newTestSandbox(t, Config{Limits: Limits{MemoryBytes: 128 << 20}, Hidden: []string{hidden}})
	j := &Jail{Sandbox: s, Workspace: ws}
	res, out := jailRun(t, context.Background(), j, `
		[ "$(hostname)" = kilroy-sandbox ] || { echo UNJAILED; exit 99; }
		echo "tmpdir=$TMPDIR"
		head -c 80000000 /dev/zero > /tmp/big 2>/dev/null && echo TMP-FILLED
		head -c 64000 /dev/zero > `+hidden+`/x 2>/dev/null && echo MASK-FILLED
		exit 0`)
	if res.ExitCode != 0 {
		t.Fatalf("exit %d: %s", res.ExitCode, out)
	}
	for _, bad := range []string{"TMP-FILLED", "MASK-FILLED"} {
		if strings.Contains(out, bad) {
			t.Errorf("%s:\n%s", bad, out)
		}
	}
	if !strings.Contains(out, "tmpdir=/tmp\n") {
		t.Errorf("TMPDIR is not /tmp:\n%s", out)
	}
}

// A program installed from the npm registry runs in the jail from
// wherever it was installed: its node_modules tree is visible read-only.
func TestJailProgramFromNodeModules(t *testing.T) {
	s := newTestSandbox(t, Config{})
	prefix := filepath.Join(t.TempDir(), "clis")
	pkg := filepath.Join(prefix, "node_modules", "@acme", "agent")
	os.MkdirAll(filepath.Join(pkg, "lib"), 0o755)
	os.MkdirAll(filepath.Join(prefix, "node_modules", ".bin"), 0o755)
	os.WriteFile(filepath.Join(pkg, "lib", "greeting.txt"), []byte("hello from the package\n"), 0o644)
	os.WriteFile(filepath.Join(pkg, "cli.sh"), []byte("#!/bin/sh\ncat \"$(dirname \"$(readlink -f \"$0\")\")/lib/greeting.txt\"\n"), 0o755)
	bin := filepath.Join(prefix, "node_modules", ".bin", "agent")
	os.Symlink("../@acme/agent/cli.sh", bin)
	j := &Jail{Sandbox: s, Workspace: t.TempDir()}
	var out bytes.Buffer
	res, err := Run(context.Background(), Cmd{Argv: []string{bin}, Dir: j.Workspace, Env: jailEnv(), Stdout: &out, Stderr: &out, Jail: j})
	if err != nil || res.ExitCode != 0 || out.String() != "hello from the package\n" {
		t.Errorf("run %s: %v, exit %d, output %q; want the package's greeting", bin, err, res.ExitCode, out.String())
	}
}

// A program on the bot's PATH that is a link into a tree beside its
// directory runs in a node's jail: nvm's bin/agent links into
// ../lib/node_modules, a hand-made bin/tool into a tool's own directory.
// The jail shows those trees read-only, and nothing else beside them.
func TestJailFollowsPATHLinks(t *testing.T) {
	s := newTestSandbox(t, Config{})
	prefix, other := t.TempDir(), t.TempDir()
	pkg := filepath.Join(prefix, "lib", "node_modules", "@acme", "agent")
	for _, d := range []string{filepath.Join(pkg, "lib"), filepath.Join(prefix, "bin"), filepath.Join(other, "tool", "bin"), filepath.Join(prefix, "private")} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(filepath.Join(pkg, "lib", "greeting.txt"), []byte("hello from the package\n"), 0o644)
	os.WriteFile(filepath.Join(pkg, "cli.sh"), []byte("#!/bin/sh\ncat \"$(dirname \"$(readlink -f \"$0\")\")/lib/greeting.txt\"\n"), 0o755)
	os.WriteFile(filepath.Join(other, "tool", "bin", "tool"), []byte("#!/bin/sh\necho tool ran\n"), 0o755)
	os.WriteFile(filepath.Join(prefix, "private", "secret"), []byte("not for nodes\n"), 0o644)
	os.Symlink("../lib/node_modules/@acme/agent/cli.sh", filepath.Join(prefix, "bin", "agent"))
	os.Symlink(filepath.Join(other, "tool", "bin", "tool"), filepath.Join(prefix, "bin", "tool"))
	host := map[string]string{"PATH": filepath.Join(prefix, "bin") + ":" + HostEnv()["PATH"], "HOME": HostEnv()["HOME"]}
	ws := t.TempDir()
	j := NodeJail(s, host, ws, "", "", "")
	var out bytes.Buffer
	res, err := Run(context.Background(), Cmd{
		Argv: []string{"sh", "-c", "agent; tool; cat " + filepath.Join(prefix, "private", "secret") + " 2>&1 || echo hidden"},
		Dir:  ws, Env: NodeEnv(EnvSpec{Host: host}), Stdout: &out, Stderr: &out, Jail: j,
	})
	want := "hello from the package\ntool ran\n"
	if err != nil || res.ExitCode != 0 || !strings.HasPrefix(out.String(), want) || !strings.HasSuffix(out.String(), "hidden\n") {
		t.Errorf("run: %v, exit %d, output %q; want %q, then the private file hidden", err, res.ExitCode, out.String(), want)
	}
}

// The jail's /dev has the devices programs use, the descriptor links and a
// writable /dev/shm, and nothing of the host's devices; it costs no mount
// besides /dev/shm's tmpfs and one bind of the bot's /dev directory where
// the bot could make one (root), else the four device binds. A node can
// change nothing in it: not its entries, their modes, nor add a device.
func TestJailDev(t *testing.T) {
	s := newTestSandbox(t, Config{})
	j := &Jail{Sandbox: s, Workspace: t.TempDir()}
	var out bytes.Buffer
	res, err := Run(context.Background(), Cmd{Argv: []string{"bash", "-c", `
		[ "$(hostname)" = kilroy-sandbox ] || { echo UNJAILED; exit 99; }
		echo discarded > /dev/null && echo null
		[ "$(head -c 4 /dev/zero | od -An -tx1 | tr -d ' ')" = 00000000 ] && echo zero
		[ "$(head -c 16 /dev/urandom | wc -c)" = 16 ] && [ "$(head -c 16 /dev/random | wc -c)" = 16 ] && echo random
		echo x 2>/dev/null > /dev/full || echo full
		cat <(echo fd) && echo stdout > /dev/stdout
		echo shm > /dev/shm/x && cat /dev/shm/x
		ls /dev | tr '\n' ' '; echo
		awk '$5 ~ "^/dev(/|$)" { print "MOUNT " $5 }' /proc/self/mountinfo
		{
			chmod 777 /dev && echo "CHMOD /dev"
			chmod 600 /dev/null && echo "CHMOD /dev/null"
			rm -f /dev/null && echo "REMOVED /dev/null"
			mv /dev/zero /dev/zero2 && echo "RENAMED /dev/zero"
			ln -sf /workspace /dev/random && echo "RELINKED /dev/random"
			touch /dev/new && echo "WROTE /dev/new"
			mknod /dev/sda1 b 8 1 && echo "MKNOD"
			mkdir /dev/x && echo "MKDIR /dev/x"
		} 2>/dev/null
		echo discarded > /dev/null && echo null`},
		Dir: j.Workspace, Env: jailEnv(), Stdout: &out, Stderr: &out, Jail: j})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Run: %v, exit %d:\n%s", err, res.ExitCode, out.String())
	}
	mounts := "MOUNT /dev/null\nMOUNT /dev/zero\nMOUNT /dev/full\nMOUNT /dev/urandom\nMOUNT /dev/shm\n"
	if s.dev != "" {
		mounts = "MOUNT /dev\nMOUNT /dev/shm\n"
	}
	want := "null\nzero\nrandom\nfull\nfd\nstdout\nshm\n" +
		"fd full null random shm stderr stdin stdout urandom zero \n" + mounts + "null\n"
	if diff := cmp.Diff(out.String(), want); diff != "" {
		t.Errorf("/dev in the jail (-got +want):\n%s", diff)
	}
}

// A HOME inside a writable directory (an agent CLI's isolated HOME under
// its stage directory) is that directory's, not a private tmpfs: what the
// bot prepared there (settings) is seen, and what the process writes
// there stays with the stage. The host's own HOME stays hidden.
func TestJailHomeInsideWritableDir(t *testing.T) {
	s := newTestSandbox(t, Config{})
	stage := t.TempDir()
	home := filepath.Join(stage, "home")
	os.MkdirAll(filepath.Join(home, ".cli"), 0o700)
	os.WriteFile(filepath.Join(home, ".cli", "settings.json"), []byte("prepared\n"), 0o600)
	j := &Jail{Sandbox: s, Workspace: t.TempDir(), Stage: stage}
	env := NodeEnv(EnvSpec{Host: map[string]string{"PATH": HostEnv()["PATH"], "HOME": HostEnv()["HOME"]}, HomeOverride: home})
	var out bytes.Buffer
	res, err := Run(context.Background(), Cmd{Argv: []string{"sh", "-c", `
		[ "$(hostname)" = kilroy-sandbox ] || { echo UNJAILED; exit 99; }
		cat "$HOME/.cli/settings.json"; echo session > "$HOME/.cli/session.log"`},
		Dir: j.Workspace, Env: env, Stdout: &out, Stderr: &out, Jail: j})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Run: %v, exit %d: %s", err, res.ExitCode, out.String())
	}
	if out.String() != "prepared\n" {
		t.Errorf("the process read %q from its HOME, want the prepared settings", out.String())
	}
	if b, err := os.ReadFile(filepath.Join(home, ".cli", "session.log")); string(b) != "session\n" {
		t.Errorf("what the process wrote in its HOME: %q, %v; want it kept in the stage directory", b, err)
	}
}

// Nothing but the mounts made for it is writable in the jail: bwrap's root
// tmpfs (the kernel's default size, half the host's memory) is read-only,
// and /dev/shm holds at most shmMax bytes, so a node without a memory
// cgroup cannot turn either into memory without a bound.
func TestJailRootIsReadOnly(t *testing.T) {
	s := newTestSandbox(t, Config{})
	j := &Jail{Sandbox: s, Workspace: t.TempDir()}
	var out bytes.Buffer
	res, err := Run(context.Background(), Cmd{Argv: []string{"bash", "-c", `
		[ "$(hostname)" = kilroy-sandbox ] || { echo UNJAILED; exit 99; }
		for d in / /dev /proc/.. /nonexistent-parent; do
			mkdir -p "$d/x" 2>/dev/null && echo "WROTE $d"
		done
		{ echo x > /x; } 2>/dev/null && echo "WROTE /x"
		echo tmp > /tmp/x && echo tmp
		head -c $((` + strconv.Itoa(shmMax) + ` - 1048576)) /dev/zero > /dev/shm/fits && echo shm
		head -c 2097152 /dev/zero > /dev/shm/over 2>/dev/null || echo shm-full`},
		Dir: j.Workspace, Env: jailEnv(), Stdout: &out, Stderr: &out, Jail: j})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Run: %v, exit %d:\n%s", err, res.ExitCode, out.String())
	}
	if diff := cmp.Diff(out.String(), "tmp\nshm\nshm-full\n"); diff != "" {
		t.Errorf("writes in the jail (-got +want):\n%s", diff)
	}
}

// A link a node planted in a directory it may write (a shared cache) where
// a cache or PATH directory of a later jail will be looked up does not
// make that jail bind what the link points to, a host directory no jail
// may show, nor make the bot create a directory there.
func TestJailRefusesPlantedLinks(t *testing.T) {
	s := newTestSandbox(t, Config{})
	host := t.TempDir() // not shown in any jail: the jail's /tmp is its own
	if err := os.WriteFile(filepath.Join(host, "secret"), []byte("HOST-SECRET\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(t.TempDir(), "gopath")
	j := &Jail{Sandbox: s, Workspace: t.TempDir(), Caches: cache}
	// The first node plants links where GOMODCACHE and GOPATH/bin would be.
	if res, out := jailRun(t, context.Background(), j,
		`ln -s `+host+` `+cache+`/pkg && ln -s `+host+` `+cache+`/bin && echo planted`); res.ExitCode != 0 || !strings.Contains(out, "planted") {
		t.Fatalf("planting: exit %d: %s", res.ExitCode, out)
	}
	next := &Jail{Sandbox: s, Workspace: t.TempDir(), ManagedRoots: cache, Caches: cache + "/pkg/mod",
		ReadOnly: []string{cache + "/bin"}}
	res, out := jailRun(t, context.Background(), next,
		`cat `+host+`/secret 2>/dev/null; cat `+cache+`/pkg/mod/../secret 2>/dev/null; ls `+host+` 2>/dev/null; echo done`)
	if res.ExitCode != 0 || strings.Contains(out, "HOST-SECRET") || strings.Contains(out, "secret") {
		t.Errorf("the next jail shows the host directory a node linked to (exit %d):\n%s", res.ExitCode, out)
	}
	if _, err := os.Stat(filepath.Join(host, "mod")); err == nil {
		t.Errorf("the bot made %s/mod through the planted link", host)
	}
}

// A stage directory that does not exist yet when its jail is planned (a
// new node's) is bound read-write all the same, with a HOME set: the HOME
// check once cached it as missing, so every sandboxed node lost its stage
// directory and the status file contract failed.
func TestNewStageDirIsWritableInTheJail(t *testing.T) {
	s := newTestSandbox(t, Config{})
	run := t.TempDir()
	ws := filepath.Join(run, "worktree")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	stage := filepath.Join(run, "nodes", "unit")
	managed := filepath.Join(run, "policy-managed-roots")
	j := NodeJail(s, HostEnv(), ws, stage, managed, "")
	res, out := jailRun(t, context.Background(), j,
		`echo '{"status":"retry"}' > `+stage+`/status.json && echo log > `+stage+`/extra.log && mkdir -p `+managed+`/cache && echo c > `+managed+`/cache/f`)
	if res.ExitCode != 0 {
		t.Fatalf("exit %d: %s", res.ExitCode, out)
	}
	for _, f := range []string{filepath.Join(stage, "status.json"), filepath.Join(stage, "extra.log"), filepath.Join(managed, "cache", "f")} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%s not written through the jail: %v", f, err)
		}
	}
}
