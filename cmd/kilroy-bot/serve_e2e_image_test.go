package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/runner/agent/agenttest"
	"github.com/kilroy-bot/kilroy-bot/runner/image/imagetest"
)

// An image a repository names that the server's images.allow does not
// allow fails the kilroy/config check at the image: line, naming the
// allowed patterns; nothing runs, nothing is pulled.
func TestServeE2EImageNotAllowed(t *testing.T) {
	policy := "images:\n  allow: [\"docker.io/library/golang:*\"]\n"
	e := newE2E(t, e2eOptions{policy: policy})
	cfg := "version: 1\npipelines:\n  ci:\n    image: ghcr.io/evil/tools:1\n"
	sha := e.repo.Commit(t, "feature-50", map[string]string{".kilroy/config.yml": cfg}, "choose an image")
	e.deliver("pull_request", e.openPR("opened", pr{number: 50, sha: sha, files: []string{".kilroy/config.yml"}}))
	e.assertConfigCheck(sha, ".kilroy/config.yml", 4)
	r := e.named(sha, "kilroy/config")[0]
	for _, want := range []string{"ghcr.io/evil/tools:1", "`docker.io/library/golang:*`", "images.allow"} {
		if !strings.Contains(r.Summary, want) || !strings.Contains(r.Annotations[0].Message, want) {
			t.Errorf("kilroy/config does not say %q:\nsummary: %s\nannotation: %s", want, r.Summary, r.Annotations[0].Message)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(e.cfg.DataDir, "images")); len(entries) > 2 {
		t.Errorf("the data dir's images/ holds %d entries after a refused image", len(entries))
	}
}

// imageSeen is what each node of TestServeE2EImageEveryNodeKind records of
// its world: the image's marker and Env, and whether it sees the host's
// git; tag names the process.
func imageSeen(tag string) string {
	return `{ cat /opt/kilroy-test/marker; echo "env=$IMAGE_ONLY path=$PATH"; [ -e /usr/bin/git ] && echo host-git; } ` +
		`> "$KILROY_STAGE_LOGS_DIR/seen-` + tag + `"; printf '{"status":"success"}' > "$KILROY_STAGE_STATUS_PATH"`
}

// A served pull request whose repository names an allowed image runs
// every node kind in it, one world for all: a tool node, a verify node,
// a command agent CLI from the host (a script whose interpreter the image
// has), its verify_command and the API agent's shell tool (fake model
// server) each see the image's files, Env and PATH and not the host's
// git, and the summary and the run page name the image and its digest.
func TestServeE2EImageEveryNodeKind(t *testing.T) {
	needSandbox(t)
	tree := t.TempDir()
	imagetest.Rootfs(t, tree, "bash", "sh", "cat")
	imagetest.WriteFile(t, tree, "opt/kilroy-test/marker", "IMAGE-MARKER\n", 0o644)
	reg := imagetest.Registry(t)
	ref := reg + "/team/tools:1"
	digest := imagetest.Push(t, ref, imagetest.Image(t, tree, testImageEnv))

	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-api03-E2ETESTKEY0123456789abcdefXYZ")
	srv := agenttest.New(t, agenttest.Tool("shell", map[string]any{"command": imageSeen("api-shell")}),
		agenttest.Text("Done. OUTCOME:SUCCESS"))
	cli := filepath.Join(t.TempDir(), "agent.sh")
	writeFile(t, cli, "#!/bin/sh\n"+imageSeen("cli-agent")+"\n", 0o755)
	policy := "images:\n  allow: [\"" + reg + "/team/**\"]\n" +
		"agents:\n  default: local\n  backends:\n" +
		"    local: {kind: cli, cli: command, no_key: true, command: [" + dotQuote(cli) + ", \"{prompt_file}\"]}\n" +
		"    anthropic: {kind: api, api: anthropic, base_url: " + dotQuote(srv.URL) + ", model: fake-model}\n"
	dot := "digraph ci {\n  start [shape=Mdiamond]\n  exit [shape=Msquare]\n" +
		"  tool [shape=parallelogram, tool_command=" + dotQuote(imageSeen("tool")) + "]\n" +
		"  check [shape=octagon, command=" + dotQuote(imageSeen("verify")) + "]\n" +
		"  agent [shape=box, prompt=\"Do the work\", verify_command=" + dotQuote(imageSeen("verify-command")) + "]\n" +
		"  api [shape=box, prompt=\"Do the work\", llm_provider=anthropic]\n" +
		"  start -> tool -> check -> agent -> api -> exit\n}\n"
	e := newE2E(t, e2eOptions{policy: policy, files: map[string]string{"main.go": mainGo, ".kilroy/ci.dot": dot,
		".kilroy/config.yml": "version: 1\nimage: " + ref + "\n"}})
	e.restart() // serve reads its environment (the API key) when it starts
	sha := e.repo.Commit(t, "feature-51", map[string]string{"notes.txt": "x\n"}, "a change")
	e.deliver("pull_request", e.openPR("opened", pr{number: 51, sha: sha, files: []string{"notes.txt"}}))
	e.waitSettled(sha, "kilroy/ci")
	e.waitIdle()
	sum := e.newestSummary(sha)
	if sum.Conclusion != "success" {
		t.Fatalf("kilroy/ci: %s, want success:\n%s", sum.Conclusion, sum.Summary)
	}
	if note := "image `" + ref + "` @ `" + digest + "`"; !strings.Contains(sum.Summary, note) {
		t.Errorf("the summary does not say %s:\n%s", note, sum.Summary)
	}
	u := strings.Index(sum.DetailsURL, "/runs/")
	if u < 0 {
		t.Fatalf("the summary links no run page: %q", sum.DetailsURL)
	}
	if code, page := e.get(sum.DetailsURL[u:]); !strings.Contains(page, "<code>"+ref+"</code> @ <code>"+digest+"</code>") {
		t.Errorf("the run page (%d) does not name the image and its digest:\n%s", code, page)
	}
	run := filepath.Join(e.cfg.DataDir, "runs", runID(sum))
	want := "IMAGE-MARKER\nenv=from-the-image path=/usr/bin:/bin\n"
	for node, tags := range map[string][]string{"tool": {"tool"}, "check": {"verify"},
		"agent": {"cli-agent", "verify-command"}, "api": {"api-shell"}} {
		for _, tag := range tags {
			if b, err := os.ReadFile(filepath.Join(run, "nodes", node, "seen-"+tag)); string(b) != want {
				t.Errorf("%s's %s saw %q (%v), want %q", node, tag, b, err, want)
			}
		}
	}
}

// markerImage pushes, as ref, an image of the host's bash, sh, cat and
// sleep holding marker at /opt/kilroy-test/marker; it returns the digest.
func markerImage(t *testing.T, ref, marker string) string {
	t.Helper()
	tree := t.TempDir()
	imagetest.Rootfs(t, tree, "bash", "sh", "cat", "sleep")
	imagetest.WriteFile(t, tree, "opt/kilroy-test/marker", marker+"\n", 0o644)
	return imagetest.Push(t, ref, imagetest.Image(t, tree, testImageEnv))
}

// markerDOT records the image's marker in seen.txt, waits for gate (a
// file the test creates) and records it again.
func markerDOT(gate string) string {
	return "digraph ci {\n  start [shape=Mdiamond]\n  done [shape=Msquare]\n" +
		"  first [shape=parallelogram, tool_command=\"cat /opt/kilroy-test/marker >> seen.txt\"]\n" +
		"  wait [shape=parallelogram, tool_command=" +
		dotQuote("while [ ! -e "+gate+" ]; do sleep 0.05; done; cat /opt/kilroy-test/marker >> seen.txt") + "]\n" +
		"  start -> first -> wait -> done\n}\n"
}

// Two repositories served at once, each naming its own image: both runs
// are in their wait node at the same time, and each sees only its own
// image's marker, before and after; each summary names its own digest.
func TestServeE2ETwoImagesAtOnce(t *testing.T) {
	needSandbox(t)
	reg := imagetest.Registry(t)
	refA, refB := reg+"/team/go-a:1.22", reg+"/team/go-b:1.25"
	digestA, digestB := markerImage(t, refA, "GO-1.22-IMAGE"), markerImage(t, refB, "GO-1.25-IMAGE")
	gate := newGate(t)
	e := newE2E(t, e2eOptions{policy: "images:\n  allow: [\"" + reg + "/team/**\"]\n",
		files: map[string]string{".kilroy/ci.dot": markerDOT(gate), ".kilroy/config.yml": "version: 1\nimage: " + refA + "\n"}})
	a := e2eTenant{owner: e2eOwner, name: e2eName, id: e2eRepoID, repo: e.repo}
	b := e.addTenant("acme", "gadgets", 9001, map[string]string{".kilroy/ci.dot": markerDOT(gate),
		".kilroy/config.yml": "version: 1\nimage: " + refB + "\n"})
	e.openTenantPR(a, 1)
	e.openTenantPR(b, 1)
	e.waitFor("both runs in their wait node at once", func() bool {
		for _, ten := range []e2eTenant{a, b} {
			s := e.summaries(ten)
			if len(s) != 1 {
				return false
			}
			if _, err := os.Stat(filepath.Join(e.cfg.DataDir, "runs", runID(s[0]), "nodes", "wait")); err != nil {
				return false
			}
		}
		return true
	})
	touch(t, gate)
	for _, tc := range []struct {
		ten            e2eTenant
		ref, digest, m string
	}{{a, refA, digestA, "GO-1.22-IMAGE"}, {b, refB, digestB, "GO-1.25-IMAGE"}} {
		files := e.runFiles(tc.ten, 1)
		sum := e.summaries(tc.ten)[0]
		if got := tc.ten.repo.Git(t, "show", "kilroy/run/ci/"+runID(sum)+":seen.txt"); got != tc.m+"\n"+tc.m {
			t.Errorf("%s's nodes saw:\n%s\nwant %s twice (files %v)", tc.ten.full(), got, tc.m, files)
		}
		if note := "image `" + tc.ref + "` @ `" + tc.digest + "`"; !strings.Contains(sum.Summary, note) {
			t.Errorf("%s's summary does not say %s:\n%s", tc.ten.full(), note, sum.Summary)
		}
	}
}
