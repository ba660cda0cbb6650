package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/kilroy-bot/kilroy-bot/runner/image/imagetest"
	"github.com/kilroy-bot/kilroy-bot/templates/templatestest"
)

// imageProbe records which toolchain a node of the run finds: the paths
// of go, node and python3 on its PATH, Go's GOROOT, and whether python3
// is the image's (its standard library has imagetest.PythonMarker).
const imageProbe = `{ echo "go=$(command -v go) node=$(command -v node) python3=$(command -v python3)"; ` +
	`echo "goroot=$(go env GOROOT 2>/dev/null)"; ` +
	`echo "marker=$(python3 -c 'import ` + imagetest.PythonMarker + `; print(` + imagetest.PythonMarker + `.IMAGE)' 2>/dev/null)"; } ` +
	`> "$KILROY_STAGE_LOGS_DIR/seen"; printf '{"status":"success"}' > "$KILROY_STAGE_STATUS_PATH"`

// withProbe is a template's pipeline with a probe node first.
func withProbe(t *testing.T, dot string) string {
	t.Helper()
	const from = "    start -> "
	if strings.Count(dot, from) != 1 {
		t.Fatalf("the pipeline has not one %q edge chain:\n%s", from, dot)
	}
	return strings.Replace(dot, from, "    probe [shape=parallelogram, tool_command="+dotQuote(imageProbe)+"]\n"+
		"    start -> probe -> ", 1)
}

// The ci-go, ci-node and ci-python templates pass on their sound project
// and fail at the right step on a planted failure, through `kilroy-bot
// run --image`, in an image of the podman-built Debian base plus the
// toolchain as a layer of its own: a node's PATH (the image's) finds
// that toolchain only, at the image's paths, and none of the host's Go,
// Node or Python, which the host has (the image has no Go in the Python
// image, and so on).
func TestTemplatesRunInToolchainImage(t *testing.T) {
	needSandbox(t)
	base, _ := imagetest.DebianBase(t)
	reg := imagetest.Registry(t)
	const sysPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	tc := imagetest.ToolchainDir
	for _, k := range []struct {
		project string
		layer   func(t *testing.T) (v1.Layer, string) // and the PATH entry, "" for none
		seen    string
	}{
		{project: "go", layer: func(t *testing.T) (v1.Layer, string) { return imagetest.GoLayer(t) },
			seen: "go=" + tc + "/go/bin/go node= python3=\ngoroot=" + tc + "/go\nmarker=\n"},
		{project: "node-npm-lockfile", layer: func(t *testing.T) (v1.Layer, string) { return imagetest.NodeLayer(t) },
			seen: "go= node=" + tc + "/node/bin/node python3=\ngoroot=\nmarker=\n"},
		{project: "python", layer: func(t *testing.T) (v1.Layer, string) { return imagetest.PythonLayer(t), "" },
			seen: "go= node= python3=/usr/bin/python3\ngoroot=\nmarker=True\n"},
	} {
		t.Run(k.project, func(t *testing.T) {
			p := templatestest.Find(k.project)
			layer, bin := k.layer(t)
			path := sysPath
			if bin != "" {
				path = bin + ":" + path
			}
			img := imagetest.Extend(t, base, []string{"PATH=" + path, "CGO_ENABLED=0"}, layer)
			ref := reg + "/toolchains/" + p.Name + ":1"
			imagetest.Push(t, ref, img)

			files := p.Files
			files[".kilroy/ci.dot"] = withProbe(t, templateContent(t, p.Template, ".kilroy/ci.dot"))
			repo := newRepo(t, files)
			data := t.TempDir()
			run := func(name string) (int, string, string) {
				t.Helper()
				runDir := filepath.Join(t.TempDir(), name)
				code, stdout, stderr := runCmd("run", "--repo", repo, "--run-dir", runDir, "--data-dir", data,
					"--format", "text", "--image", ref)
				seen, err := os.ReadFile(filepath.Join(runDir, "nodes", "probe", "seen"))
				if err != nil || string(seen) != k.seen {
					t.Errorf("%s: the probe node saw:\n%s(%v)\nwant:\n%s", name, seen, err, k.seen)
				}
				return code, stdout, stderr
			}
			if code, stdout, stderr := run("sound"); code != 0 {
				t.Fatalf("run on the sound project: exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			for name, content := range p.Broken {
				writeTree(t, filepath.Join(repo, filepath.FromSlash(name)), content)
			}
			gitT(t, repo, "commit", "--quiet", "-am", "plant a failure")
			code, stdout, stderr := run("broken")
			if code != 1 || !strings.Contains(stdout, p.FailedNode+" failed") {
				t.Fatalf("run with the planted failure: exit %d, want 1 and %q failed\nstdout:\n%s\nstderr:\n%s", code, p.FailedNode, stdout, stderr)
			}
			if p.Finding != "" && !strings.Contains(stdout, p.Finding) {
				t.Errorf("the summary has no finding at %s:\n%s", p.Finding, stdout)
			}
		})
	}
}
