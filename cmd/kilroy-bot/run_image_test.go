package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"

	"github.com/kilroy-bot/kilroy-bot/runner"
	"github.com/kilroy-bot/kilroy-bot/runner/image/imagetest"
)

// imageScript is the tool node of the image tests: it records what it
// sees of the image (a marker file, a variable of the image's Env) and of
// the host (git, which the host has and the image has not), and fulfils
// the status contract.
const imageScript = `cat /opt/kilroy-test/marker > seen.txt; echo "env=$IMAGE_ONLY" >> seen.txt; ` +
	`[ -e /usr/bin/git ] && echo host-git >> seen.txt; ` +
	`printf '{"status":"success"}' > "$KILROY_STAGE_STATUS_PATH"`

// testImage builds the image of the tests, from the host's bash and cat,
// and returns its tree's image.
func testImageTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	imagetest.Rootfs(t, root, "bash", "cat")
	imagetest.WriteFile(t, root, "opt/kilroy-test/marker", "IMAGE-MARKER\n", 0o644)
	return root
}

var testImageEnv = []string{"PATH=/usr/bin:/bin", "IMAGE_ONLY=from-the-image"}

// `kilroy-bot run` runs every node in the image the repository's image:
// names, or --image names over it (a registry on loopback, an OCI layout
// directory); --image host forces the host jail. The node sees the
// image's files and Env and not the host's programs, the run pins the
// digest in checkpoint.json, and the report names image and digest.
func TestRunInImage(t *testing.T) {
	needSandbox(t)
	tree := testImageTree(t)
	img := imagetest.Image(t, tree, testImageEnv)
	reg := imagetest.Registry(t)
	ref := reg + "/test/tools:1"
	digest := imagetest.Push(t, ref, img)
	ociDir := t.TempDir()
	lp, err := layout.Write(ociDir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := lp.AppendImage(img); err != nil {
		t.Fatal(err)
	}
	dot := dotFor(`  n [shape=parallelogram, tool_command=` + dotQuote(imageScript) + `]
  start -> n -> exit`)
	inImage := "IMAGE-MARKER\nenv=from-the-image\n"
	for _, tc := range []struct {
		name, config string
		flags        []string
		want         string // seen.txt
		pinned       string // the image checkpoint.json names, "" for none
	}{
		{name: "image: in config.yml", config: "version: 1\nimage: " + ref + "\n", want: inImage, pinned: ref},
		{name: "per pipeline", config: "version: 1\nimage: host\npipelines:\n  ci:\n    image: " + ref + "\n", want: inImage, pinned: ref},
		{name: "--image", flags: []string{"--image", ref}, want: inImage, pinned: ref},
		{name: "--image oci:DIR", flags: []string{"--image", "oci:" + ociDir}, want: inImage, pinned: "oci:" + ociDir},
		{name: "--image host over config", config: "version: 1\nimage: " + ref + "\n", flags: []string{"--image", "host"},
			want: "env=\nhost-git\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{".kilroy/ci.dot": dot}
			if tc.config != "" {
				files[".kilroy/config.yml"] = tc.config
			}
			repo := newRepo(t, files)
			dir := t.TempDir()
			runDir := filepath.Join(dir, "run")
			args := append([]string{"run", "--repo", repo, "--run-dir", runDir, "--data-dir", filepath.Join(dir, "data"),
				"--format", "markdown"}, tc.flags...)
			code, stdout, stderr := runCmd(args...)
			if code != 0 {
				t.Fatalf("run exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			b, err := os.ReadFile(filepath.Join(runDir, "worktree", "seen.txt"))
			if err != nil {
				b = []byte(gitT(t, repo, "show", runBranch(t, repo)+":seen.txt") + "\n")
			}
			if string(b) != tc.want {
				t.Errorf("the node saw:\n%s\nwant:\n%s", b, tc.want)
			}
			cp, err := runner.ReadCheckpoint(runDir)
			if err != nil {
				t.Fatal(err)
			}
			note := "image `" + tc.pinned + "` @ `" + digest + "`"
			switch {
			case tc.pinned == "" && cp.Image != nil:
				t.Errorf("checkpoint.json pins an image: %+v", cp.Image)
			case tc.pinned == "":
			case cp.Image == nil || cp.Image.Ref != tc.pinned || cp.Image.Pinned.Digest != digest:
				t.Errorf("checkpoint.json image = %+v, want %s @ %s", cp.Image, tc.pinned, digest)
			case !strings.Contains(stdout, note):
				t.Errorf("the report does not say %s:\n%s", note, stdout)
			}
		})
	}
}

// runBranch is the repository's one run branch.
func runBranch(t *testing.T, repo string) string {
	t.Helper()
	return gitT(t, repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/kilroy/")
}

// A run killed in its image resumes in the same image, by the digest it
// pinned, although its tag has moved to another image meanwhile.
func TestResumeInPinnedImage(t *testing.T) {
	needSandbox(t)
	tree := testImageTree(t)
	reg := imagetest.Registry(t)
	ref := reg + "/test/tools:1"
	digest := imagetest.Push(t, ref, imagetest.Image(t, tree, testImageEnv))
	dir := t.TempDir()
	runDir := filepath.Join(dir, "run")
	blocked := filepath.Join(runDir, "policy-managed-roots", "blocked")
	// block waits the first time, until the test kills the run; the
	// managed roots outlive the kill, so it passes on resume.
	block := `if [ -e ` + blocked + ` ]; then exit 0; fi; : > ` + blocked + `; exec cat`
	repo := newRepo(t, map[string]string{
		".kilroy/config.yml": "version: 1\nimage: " + ref + "\n",
		".kilroy/ci.dot": dotFor(`  block [shape=parallelogram, tool_command=` + dotQuote(block) + `]
  look [shape=parallelogram, tool_command=` + dotQuote(imageScript) + `]
  start -> block -> look -> exit`),
	})
	cmd := exec.Command(os.Args[0], "run", "--repo", repo, "--run-dir", runDir, "--data-dir", filepath.Join(dir, "data"))
	cmd.Env = append(os.Environ(), beKilroyBot+"=1")
	stdin, err := cmd.StdinPipe() // held open: the blocked node's cat never ends on its own
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(blocked); err == nil {
			break
		}
		if time.Now().After(deadline) {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
			t.Fatalf("the block node did not start:\n%s", out.String())
		}
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()

	moved := t.TempDir()
	imagetest.Rootfs(t, moved, "bash", "cat")
	imagetest.WriteFile(t, moved, "opt/kilroy-test/marker", "MOVED-TAG\n", 0o644)
	if d := imagetest.Push(t, ref, imagetest.Image(t, moved, testImageEnv)); d == digest {
		t.Fatal("the moved tag names the same image")
	}
	code, stdout, stderr := kilroyBot(t, "resume", "--data-dir", filepath.Join(dir, "data"), "--format", "markdown", runDir)
	if code != 0 {
		t.Fatalf("resume exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if got := gitT(t, repo, "show", runBranch(t, repo)+":seen.txt"); got != "IMAGE-MARKER\nenv=from-the-image" {
		t.Errorf("the resumed node saw:\n%s\nwant the pinned image's marker", got)
	}
	if note := "image `" + ref + "` @ `" + digest + "`"; !strings.Contains(stdout, note) {
		t.Errorf("the resumed run's report does not say %s:\n%s", note, stdout)
	}
}

// A command the image lacks fails its node as the environment's problem,
// naming the image and the key to change: a tool's command (bash's exit
// status 127) and an agent CLI (before it starts, so before any model
// call).
func TestRunImageMissingCommand(t *testing.T) {
	needSandbox(t)
	reg := imagetest.Registry(t)
	ref := reg + "/test/tools:1"
	imagetest.Push(t, ref, imagetest.Image(t, testImageTree(t), testImageEnv))
	for _, tc := range []struct {
		name, node, agentCLI string
		want                 []string
	}{
		{name: "tool", node: `n [shape=parallelogram, tool_command="go version"]`,
			want: []string{"Environment problem, not the change's: `go` is not in image `" + ref + "`",
				"`image:` in .kilroy/config.yml", "tool_command exited with status 127"}},
		{name: "verify", node: `n [shape=octagon, command="cat go.mod && go vet ./..."]`,
			want: []string{"Environment problem, not the change's: `go` is not in image `" + ref + "`"}},
		{name: "agent CLI", node: `n [shape=box, prompt="Do the work"]`, agentCLI: "kilroy-test-no-such-cli",
			want: []string{"`kilroy-test-no-such-cli` not found in image " + ref, "`image:` in .kilroy/config.yml",
				"agents.backends.local.command"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := newRepo(t, map[string]string{".kilroy/ci.dot": dotFor("  " + tc.node + "\n  start -> n -> exit"),
				"go.mod": "module x\n"})
			dir := t.TempDir()
			args := []string{"run", "--repo", repo, "--run-dir", filepath.Join(dir, "run"), "--data-dir", filepath.Join(dir, "data"),
				"--format", "markdown", "--image", ref}
			if tc.agentCLI != "" {
				agents := filepath.Join(dir, "agents.yml")
				writeAgents(t, agents, "local", map[string]any{"kind": "cli", "cli": "command", "no_key": true,
					"command": []string{tc.agentCLI, "{prompt_file}"}}, 0)
				args = append(args, "--agents", agents)
			}
			code, stdout, stderr := runCmd(args...)
			if code != 1 {
				t.Fatalf("run exited %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("the report does not say %q:\n%s", w, stdout)
				}
			}
			if !strings.Contains(stdout, "### ❌ `n` (structural)") {
				t.Errorf("the report does not call n's failure structural (the environment's, not the change's):\n%s", stdout)
			}
		})
	}
}

// An image needs the sandbox: with --no-sandbox, a run whose repository
// names one stops before its first node, saying what to do.
func TestRunImageNeedsSandbox(t *testing.T) {
	reg := imagetest.Registry(t)
	ref := reg + "/test/tools:1"
	imagetest.Push(t, ref, imagetest.Image(t, testImageTree(t), testImageEnv))
	repo := newRepo(t, map[string]string{".kilroy/ci.dot": dotFor("  start -> exit"),
		".kilroy/config.yml": "version: 1\nimage: " + ref + "\n"})
	dir := t.TempDir()
	code, stdout, stderr := runCmd("run", "--no-sandbox", "--repo", repo, "--run-dir", filepath.Join(dir, "run"),
		"--data-dir", filepath.Join(dir, "data"))
	if want := "nodes run in an image only in the sandbox"; code != 2 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "--image host") {
		t.Errorf("run exited %d, want 2 saying %q and --image host\nstdout:\n%s\nstderr:\n%s", code, want, stdout, stderr)
	}
	if branches := gitT(t, repo, "for-each-ref", "refs/heads/kilroy/"); branches != "" {
		t.Errorf("a run that did not start left branches: %s", branches)
	}
}
