package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/kilroy-bot/kilroy-bot/runner/agent/agenttest"
	"github.com/kilroy-bot/kilroy-bot/runner/image/imagetest"
)

// imageMarker is a file only the test images hold.
const imageMarker = "/opt/kilroy-test/cli-marker"

// agentRuntime returns the CLIs' install directory (bin is a CLI there),
// and skips unless it is also an agent runtime (bin/node beside
// node_modules), as scripts/install-agent-clis.sh leaves it.
func agentRuntime(t *testing.T, bin string) string {
	t.Helper()
	dir := strings.TrimSuffix(bin, filepath.Join("/node_modules", ".bin", filepath.Base(bin)))
	if _, err := os.Stat(filepath.Join(dir, "bin", "node")); err != nil {
		t.Skipf("%s is not an agent runtime (no bin/node): run scripts/install-agent-clis.sh again", dir)
	}
	return dir
}

// debianPATH is the PATH of the test images made from the Debian base.
const debianPATH = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// cliMarkerImage is base with imageMarker added: a file only the test
// image holds.
func cliMarkerImage(t *testing.T, base v1.Image) v1.Image {
	t.Helper()
	layer := imagetest.CachedLayer(t, "cli-marker-1", func(dir string) {
		imagetest.WriteFile(t, dir, imageMarker, "IMAGE-MARKER\n", 0o644)
	})
	return imagetest.Extend(t, base, []string{debianPATH}, layer)
}

// runtimeProbe, run by an agent's shell tool, writes to hello.txt what the
// shell sees of its image; runtimeProbeSaw is what it writes in an image
// of cliMarkerImage without node, from the agent runtime.
const (
	runtimeProbe    = `{ echo hi; cat ` + imageMarker + `; command -v node || echo no-node; echo "ld=${LD_LIBRARY_PATH:-unset}"; } > hello.txt`
	runtimeProbeSaw = "hi\nIMAGE-MARKER\nno-node\nld=unset\n"
)

// Each real CLI runs a node in an image of the Debian base, which has
// neither node nor the CLIs, from the bot's agent runtime: the CLIs'
// install directory, which `kilroy-bot run` finds from the command's
// path. The CLI's shell tool runs in the image (it reads a file only the
// image has) and sees neither the runtime's node nor a library path of
// the runtime's.
func TestRealCLIsInImage(t *testing.T) {
	needSandbox(t)
	base, _ := imagetest.DebianBase(t)
	bins := map[string]string{}
	for _, c := range []cliUnderTest{claudeCLI, codexCLI, geminiCLI} {
		bins[c.program] = agentCLIDir(t, c.program)
		agentRuntime(t, bins[c.program])
	}
	ref := imagetest.Registry(t) + "/test/debian-cli:1"
	imagetest.Push(t, ref, cliMarkerImage(t, base))
	srv, network := modelServer(t)
	for _, c := range []cliUnderTest{claudeCLI, codexCLI, geminiCLI} {
		t.Run(c.cli, func(t *testing.T) {
			c.bin, c.sandbox, c.network = bins[c.program], true, network
			runCLICase(t, srv, c, cliCase{
				name:        "in image",
				turns:       []agenttest.Turn{c.shell.turn(runtimeProbe), agenttest.Text("Created hello.txt. OUTCOME:SUCCESS")},
				config:      "version: 1\nimage: " + ref + "\n",
				wantClasses: []string{""}, wantCommit: true,
				wantHello: runtimeProbeSaw,
			})
		})
	}
}

// agents.runtime names the runtime: a command naming the CLI by its bare
// name runs it from there where neither the image nor the host's PATH
// has it, and where the image has it as an npm script but no node to run
// it (its own copy stays unused).
func TestRealCLIFromConfiguredRuntime(t *testing.T) {
	needSandbox(t)
	base, _ := imagetest.DebianBase(t)
	c := codexCLI
	bin := agentCLIDir(t, c.program)
	runtimeDir := agentRuntime(t, bin)
	if p, err := exec.LookPath(c.program); err == nil {
		t.Skipf("%s is on this test's PATH (%s): the bare name would find the host's copy", c.program, p)
	}
	reg := imagetest.Registry(t)
	srv, network := modelServer(t)
	c.bin, c.sandbox, c.network = c.program, true, network
	c.runtime = runtimeDir
	npmScript := imagetest.CachedLayer(t, "codex-without-node-1", func(dir string) {
		imagetest.WriteFile(t, dir, "usr/local/bin/codex", "#!/usr/bin/env node\nthrow new Error('the image copy ran')\n", 0o755)
	})
	for _, tc := range []struct {
		name string
		img  func() v1.Image
	}{
		{name: "not in the image", img: func() v1.Image { return imagetest.Extend(t, base, []string{debianPATH}) }},
		{name: "npm script without node", img: func() v1.Image { return imagetest.Extend(t, base, []string{debianPATH}, npmScript) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref := reg + "/test/debian-" + strings.ReplaceAll(tc.name, " ", "-") + ":1"
			imagetest.Push(t, ref, tc.img())
			runCLICase(t, srv, c, cliCase{
				name:        tc.name,
				turns:       []agenttest.Turn{c.shell.turn(`{ echo hi; cat /etc/debian_version >/dev/null && echo debian; } > hello.txt`), agenttest.Text("OUTCOME:SUCCESS")},
				config:      "version: 1\nimage: " + ref + "\n",
				wantClasses: []string{""}, wantCommit: true, wantHello: "hi\ndebian\n",
			})
		})
	}
}

// Where the agent runtime cannot run, a CLI node whose image lacks the
// CLI fails structural before the CLI starts, so before any model call,
// naming both fixes: a musl-based image (its loader, no glibc's), and an
// image without /bin/sh.
func TestRealCLIImageUnfitForRuntime(t *testing.T) {
	needSandbox(t)
	c := claudeCLI
	c.bin = agentCLIDir(t, c.program)
	agentRuntime(t, c.bin)
	reg := imagetest.Registry(t)
	srv, network := modelServer(t)
	c.sandbox, c.network = true, network
	for _, tc := range []struct {
		name, image string
		tree        func(t *testing.T, dir string)
		want        string
	}{
		{name: "musl", image: "musl", want: "musl-based (it has /lib/ld-musl-x86_64.so.1 and no glibc loader",
			tree: func(t *testing.T, dir string) {
				imagetest.WriteFile(t, dir, "lib/ld-musl-x86_64.so.1", "\x7fELF, a stand-in for musl's loader\n", 0o755)
				imagetest.WriteFile(t, dir, "bin/sh", "#!/lib/ld-musl-x86_64.so.1\n", 0o755)
			}},
		{name: "no /bin/sh", image: "nosh", want: "has no /bin/sh",
			tree: func(t *testing.T, dir string) {
				imagetest.WriteFile(t, dir, "etc/os-release", "ID=kilroy-test\n", 0o644)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.image == "musl" && runtime.GOARCH != "amd64" {
				t.Skip("the stand-in musl loader has x86-64's name")
			}
			dir := t.TempDir()
			tc.tree(t, dir)
			ref := reg + "/test/unfit-" + tc.image + ":1"
			imagetest.Push(t, ref, imagetest.Image(t, dir, []string{"PATH=/usr/bin:/bin"}))
			runCLICase(t, srv, c, cliCase{
				name:        tc.name,
				turns:       []agenttest.Turn{agenttest.Text("never asked")},
				config:      "version: 1\nimage: " + ref + "\n",
				noRetry:     true,
				wantClasses: []string{"structural"}, wantRun: "structural",
				wantReason: tc.want, wantNoCalls: true,
				reasonHas: []string{"Use an image that has claude", "`image:` in .kilroy/config.yml", "a glibc-based image with /bin/sh"},
			})
		})
	}
}

// The runtime's node, as the bot ports it, runs in an image without node
// and behaves as node does there: process.execPath is a program that
// runs again (the CLIs start child Node processes with it), a child
// process gets no library path of the runtime's and finds the image's
// programs, and `node` is not on the agent's PATH. A runtime made for
// the test from the host's node holds a command-flavour CLI that checks
// this and writes what it saw.
func TestRuntimeNodeInImage(t *testing.T) {
	needSandbox(t)
	base, _ := imagetest.DebianBase(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node on this host to make a runtime from")
	}
	rt := t.TempDir()
	body, err := os.ReadFile(node)
	if err != nil {
		t.Fatal(err)
	}
	imagetest.WriteFile(t, rt, "bin/node", string(body), 0o755)
	imagetest.WriteFile(t, rt, "node_modules/probe/probe.js", `#!/usr/bin/env node
const cp = require("child_process");
const child = cp.spawnSync(process.execPath, ["-e", "console.log('child ' + process.version)"]).stdout.toString().trim();
const sh = cp.execSync("echo ld=${LD_LIBRARY_PATH:-unset} node=$(command -v node || echo none) $(cat `+imageMarker+`)").toString().trim();
require("fs").writeFileSync("hello.txt", ["hi", "execPath " + process.execPath, child === "child " + process.version ? "child ok" : "child: " + child, sh].join("\n") + "\n");
console.log("OUTCOME:SUCCESS");
`, 0o755)
	if err := os.MkdirAll(filepath.Join(rt, "node_modules", ".bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../probe/probe.js", filepath.Join(rt, "node_modules", ".bin", "probe")); err != nil {
		t.Fatal(err)
	}
	ref := imagetest.Registry(t) + "/test/debian-node-probe:1"
	imagetest.Push(t, ref, cliMarkerImage(t, base))
	repo := newRepo(t, map[string]string{
		".kilroy/config.yml": "version: 1\nimage: " + ref + "\n",
		".kilroy/ci.dot": dotFor(`  fix [shape=box, prompt="probe"]
  start -> fix -> exit`),
	})
	dir := t.TempDir()
	agents := filepath.Join(dir, "agents.yml")
	writeAgents(t, agents, "probe", map[string]any{"kind": "cli", "cli": "command", "no_key": true,
		"command": []string{filepath.Join(rt, "node_modules", ".bin", "probe")}}, 0)
	code, stdout, stderr := runCmd("run", "--repo", repo, "--run-dir", filepath.Join(dir, "run"),
		"--data-dir", filepath.Join(dir, "data"), "--agents", agents)
	if code != 0 {
		t.Fatalf("run exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	want := "hi\nexecPath /kilroy/lib/node\nchild ok\nld=unset node=none IMAGE-MARKER\n"
	if got := gitT(t, repo, "show", runBranch(t, repo)+":hello.txt") + "\n"; got != want {
		t.Errorf("the probe saw:\n%s\nwant:\n%s", got, want)
	}
}
