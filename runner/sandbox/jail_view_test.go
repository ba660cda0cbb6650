package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/runner/image/imagetest"
)

// Host paths of a jail's roots are rewritten where they stand in a value:
// alone, below a root, in a list, after an option's "=", in a command;
// never inside another name, and a nested root's own path goes through
// its outer root's place.
func TestPathViewRewrite(t *testing.T) {
	j := &Jail{Sandbox: &Sandbox{paths: newPathCache(pathTTL)}, Workspace: "/data/runs/r1/worktree",
		Stage: "/data/runs/r1/nodes/n", ManagedRoots: "/data/runs/r1/policy-managed-roots",
		Caches: "/data/runs/r1/worktree/.cache"}
	v := j.view()
	for _, tt := range []struct{ in, want string }{
		{"/data/runs/r1/worktree", "/workspace"},
		{"/data/runs/r1/worktree/pkg/x.go", "/workspace/pkg/x.go"},
		{"/data/runs/r1/nodes/n/status.json", "/kilroy/stage/status.json"},
		{"/data/runs/r1/worktree/.cache/gomodcache", "/workspace/.cache/gomodcache"}, // nested: through the worktree
		{"/usr/bin:/data/runs/r1/policy-managed-roots/go/bin:/bin", "/usr/bin:/kilroy/managed-roots/go/bin:/bin"},
		{"-Xmx1g -Dmaven.repo.local=/data/runs/r1/worktree/.cache/m2", "-Xmx1g -Dmaven.repo.local=/workspace/.cache/m2"},
		{`cat "/data/runs/r1/nodes/n/x" > /data/runs/r1/worktree/y`, `cat "/kilroy/stage/x" > /workspace/y`},
		{"/data/runs/r1/worktree2", "/data/runs/r1/worktree2"},
		{"/data/runs/r1/nodes/nn/status.json", "/data/runs/r1/nodes/nn/status.json"},
		{"/x/data/runs/r1/worktree", "/x/data/runs/r1/worktree"},
		{"file.data/runs/r1/worktree", "file.data/runs/r1/worktree"},
		{"/data/runs/r1", "/data/runs/r1"},
		{"no path", "no path"},
	} {
		if got := v.rewrite(tt.in); got != tt.want {
			t.Errorf("rewrite(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := j.Path("/data/runs/r1/nodes/n/home"); got != "/kilroy/stage/home" {
		t.Errorf("Path of the stage's home: %q", got)
	}
	if got := (*Jail)(nil).Path("/data/runs/r1/worktree"); got != "/data/runs/r1/worktree" {
		t.Errorf("Path without a jail: %q, want the host path", got)
	}
}

// jailRunDir is the run of TestJailShowsNoHostPath: a repository with a
// linked worktree, a stage directory, managed roots and caches, laid out
// as serve lays them out in a data dir.
type jailRunDir struct {
	data, repo, ws, stage, managed, cache, runID string
}

func newJailRunDir(t *testing.T) jailRunDir {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	data := filepath.Join(t.TempDir(), "data")
	d := jailRunDir{data: data, runID: "01JRUNIDOFTHETEST", repo: filepath.Join(data, "mirrors", "1", "octo", "widgets.git")}
	run := filepath.Join(data, "runs", d.runID)
	d.ws, d.stage, d.managed = filepath.Join(run, "worktree"), filepath.Join(run, "nodes", "probe"), filepath.Join(run, "policy-managed-roots")
	d.cache = filepath.Join(data, "caches", "1", "octo", "widgets", "cache")
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main", d.repo)
	if err := os.WriteFile(filepath.Join(d.repo, "tracked.txt"), []byte("v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("-C", d.repo, "add", "tracked.txt")
	git("-C", d.repo, "commit", "-qm", "init")
	// Another run's worktree of the same repository: the jail lists none.
	git("-C", d.repo, "worktree", "add", "-q", "-b", "kilroy/run/ci/OTHERRUN", filepath.Join(data, "runs", "OTHERRUN", "worktree"))
	git("-C", d.repo, "worktree", "add", "-q", "-b", "kilroy/run/ci/"+d.runID, d.ws)
	if err := os.WriteFile(filepath.Join(d.ws, "tracked.txt"), []byte("v2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return d
}

// probeScript prints what a node can learn of where it runs: its
// environment, directory, mounts, the sandbox's command line, what its
// git says. It writes the stage status file and a file in the worktree.
const probeScript = `
	echo "== env"; env
	echo "== pwd"; pwd
	echo "== mounts"; cat /proc/self/mountinfo
	echo "== cmdline"; tr '\0' ' ' < /proc/1/cmdline; echo
	echo "== git"; echo new > new.txt; git rev-parse --git-dir --show-toplevel; git status --short; git worktree list; cat .git
	printf '{"status":"fail","failure_reason":"as written"}' > "$KILROY_STAGE_STATUS_PATH"
	echo "== end"`

// A node sees no host path of its run: not in its environment (stage,
// cache, policy variables, HOME, PWD), working directory, the mount points
// of /proc/self/mountinfo, the sandbox's command line (/proc/1/cmdline),
// nor its git, which works on the fixed paths (the worktree at
// /workspace, its repository at /kilroy/git) and lists no other run's
// worktree. Cold and prewarmed jails alike, on the host's root or an
// image's. The bot's own git still reads the host's .git.
func TestJailShowsNoHostPath(t *testing.T) {
	base := newTestSandbox(t, Config{})
	imageRoot := t.TempDir()
	imagetest.Rootfs(t, imageRoot, "sh", "env", "cat", "tr", "git", "pwd")
	for _, d := range []string{"proc", "dev", "tmp"} {
		if err := os.MkdirAll(filepath.Join(imageRoot, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name    string
		s       *Sandbox
		prewarm bool
	}{
		{"host root, cold", base, false},
		{"host root, prewarmed", base, true},
		{"image root, cold", base.WithImage(Image{Root: imageRoot, Name: "probe", Env: []string{"PATH=/usr/bin:/bin"}}), false},
		{"image root, prewarmed", base.WithImage(Image{Root: imageRoot, Name: "probe", Env: []string{"PATH=/usr/bin:/bin"}}), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newJailRunDir(t)
			host := HostEnv()
			j := NodeJail(tc.s, host, d.ws, d.stage, d.managed, d.cache)
			env := NodeEnv(EnvSpec{
				Host: map[string]string{"PATH": host["PATH"], "HOME": host["HOME"]}, Image: tc.s.ImageEnv(), Caches: d.cache,
				Policy: map[string]string{"CARGO_TARGET_DIR": filepath.Join(d.managed, "cargo-target"),
					"MAVEN_OPTS": "-Xmx1g -Dmaven.repo.local=" + filepath.Join(d.cache, "m2")},
				Stage: map[string]string{"KILROY_STAGE_STATUS_PATH": filepath.Join(d.stage, "status.json"),
					"KILROY_STAGE_LOGS_DIR": d.stage, "KILROY_STAGE_STATUS_FALLBACK_PATH": filepath.Join(d.ws, ".kilroy-status.json")},
			})
			c := Cmd{Argv: []string{"sh", "-c", probeScript}, Dir: d.ws, Env: env, Jail: j}
			if tc.prewarm {
				prewarm(t, tc.s, c)
			}
			res, out := runOut(t, c)
			if res.ExitCode != 0 || res.prewarmed != tc.prewarm || !strings.Contains(out, "== end") {
				t.Fatalf("exit %d, prewarmed %v (want %v):\n%s", res.ExitCode, res.prewarmed, tc.prewarm, out)
			}
			checkNoHostPath(t, d, out)
			if b, err := os.ReadFile(filepath.Join(d.stage, "status.json")); !strings.Contains(string(b), "as written") {
				t.Errorf("the status file the node wrote at $KILROY_STAGE_STATUS_PATH: %q, %v", b, err)
			}
			// The host's .git is the bot's own, untouched: its git works there.
			if b, err := os.ReadFile(filepath.Join(d.ws, ".git")); err != nil || !strings.Contains(string(b), d.repo) {
				t.Errorf("the worktree's .git on the host: %q, %v; want it naming %s", b, err, d.repo)
			}
			if out, err := exec.Command("git", "-C", d.ws, "status", "--short").CombinedOutput(); err != nil ||
				!strings.Contains(string(out), "?? new.txt") {
				t.Errorf("the bot's git in the worktree after the node: %v\n%s", err, out)
			}
		})
	}
}

// checkNoHostPath checks a probeScript's output (see TestJailShowsNoHostPath).
func checkNoHostPath(t *testing.T, d jailRunDir, out string) {
	t.Helper()
	sections := map[string]string{}
	for _, part := range strings.Split(out, "== ")[1:] {
		name, body, _ := strings.Cut(part, "\n")
		sections[name] = body
	}
	// Field 4 of mountinfo is where a bind's source lies in its own
	// filesystem: the kernel's, for any bind (docs/serve.md §11). The
	// mount points and the rest are the jail's.
	var mounts []string
	for _, line := range strings.Split(sections["mounts"], "\n") {
		if f := strings.Fields(line); len(f) > 4 {
			mounts = append(mounts, strings.Join(append(f[:3:3], f[4:]...), " "))
		}
	}
	sections["mounts"] = strings.Join(mounts, "\n")
	for name, body := range sections {
		// The run's ID is no secret (KILROY_RUN_ID, the run branch), but
		// no path names it.
		for _, bad := range []string{filepath.Dir(d.data), d.runID + "/", "OTHERRUN", "octo", "widgets"} {
			if strings.Contains(body, bad) {
				t.Errorf("%s shows %q:\n%s", name, bad, body)
			}
		}
	}
	for _, want := range []string{"PWD=/workspace", "HOME=/home/kilroy", "KILROY_STAGE_STATUS_PATH=/kilroy/stage/status.json",
		"KILROY_STAGE_LOGS_DIR=/kilroy/stage\n", "KILROY_STAGE_STATUS_FALLBACK_PATH=/workspace/.kilroy-status.json",
		"GOMODCACHE=/kilroy/cache/gomodcache", "CARGO_TARGET_DIR=/kilroy/managed-roots/cargo-target",
		"MAVEN_OPTS=-Xmx1g -Dmaven.repo.local=/kilroy/cache/m2"} {
		if !strings.Contains(sections["env"], want) {
			t.Errorf("env lacks %q:\n%s", want, sections["env"])
		}
	}
	if diff := cmp.Diff(sections["pwd"], "/workspace\n"); diff != "" {
		t.Errorf("pwd (-got +want):\n%s", diff)
	}
	wantGit := "/kilroy/git/worktrees/workspace\n/workspace\n M tracked.txt\n?? new.txt\n"
	if !strings.HasPrefix(sections["git"], wantGit) || !strings.Contains(sections["git"], "\n/workspace ") ||
		!strings.HasSuffix(sections["git"], "gitdir: /kilroy/git/worktrees/workspace\n") {
		t.Errorf("git in the jail:\n%s\nwant it to start with:\n%s", sections["git"], wantGit)
	}
	for _, mp := range []string{" /workspace ", " /kilroy/stage ", " /kilroy/managed-roots ", " /kilroy/cache ", " /kilroy/git "} {
		if !strings.Contains(sections["mounts"], mp) {
			t.Errorf("no mount at %s:\n%s", mp, sections["mounts"])
		}
	}
}
