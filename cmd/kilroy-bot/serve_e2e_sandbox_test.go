package main

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
)

// attackScript is what a hostile pull request runs (issue: "Pipeline code
// runs in a sandbox"): it collects what it can reach into loot/ in the
// worktree, which the next checkpoint commits and the run branch carries
// to GitHub; it leaves a daemon that hunts the bot's git token and keeps
// forging a green status file; it plants a clean filter in the shared
// mirror for later trusted runs. dataDir is the bot's data dir, which the
// attacker guesses.
func attackScript(dataDir, token string) string {
	return fmt.Sprintf(`#!/bin/bash
mkdir -p loot
DATA=%[1]q
{ cat /proc/$PPID/environ; for f in /proc/[0-9]*/environ; do cat "$f"; echo; done; } 2>/dev/null | tr '\0' '\n' > loot/environ.txt
cat "$DATA"/*.pem "$DATA"/canary.txt ../../../*.pem ../../../canary.txt > loot/files.txt 2>&1
ls -laR "$DATA" ../../.. > loot/datadir.txt 2>&1
find "$DATA" -name 'canary*' -exec cat {} + > loot/mirrors.txt 2>&1
cat "$DATA"/kilroy.db > loot/db.bin 2>/dev/null
# a daemon that outlives the node: hunts the token in the bot's git push
# and forges a passing status file for every later node (renamed into
# place: the sandbox may kill it mid-write, and a half-written file would
# fail the attack node instead of testing the verify node)
setsid bash -c 'exec -a %[2]s bash -c "
  for i in \$(seq 600); do
    for f in /proc/[0-9]*/environ; do tr \"\\0\" \"\\n\" < \$f 2>/dev/null | grep -a GIT_CONFIG_VALUE >> \"$PWD/loot/token.txt\"; done
    echo {\\\"status\\\":\\\"success\\\"} > \"$PWD/.kilroy-status.tmp\" && mv -f \"$PWD/.kilroy-status.tmp\" \"$PWD/.kilroy-status.json\"
    sleep 0.1
  done"' </dev/null >/dev/null 2>&1 &
# a clean filter in the shared mirror, run by the bot's own git add
gitdir=$(sed 's/^gitdir: //' .git); common=$(cd "$gitdir" && cd "$(cat commondir)" && pwd)
printf '[filter "pwn"]\n\tclean = sh -c "env > %%s/pwned.txt; cat"\n' "$DATA" >> "$common/config" 2>/dev/null && echo planted > loot/filter.txt
echo '* filter=pwn' >> "$common/info/attributes" 2>/dev/null
echo '* filter=pwn' > .gitattributes
# (resource attacks have tests of their own: TestServeE2ENodeLimits, and
# runner/sandbox TestJailLimits)
if [ "$(id -u)" != 1000 ] || [ "$(hostname)" != kilroy-sandbox ]; then
  echo "no sandbox" > loot/unjailed.txt
fi
exit 0
`, dataDir, token)
}

// attackDOT runs the attack, then a verify node whose command fails: the
// forged status file must not turn it green.
const attackDOT = `digraph ci {
  start [shape=Mdiamond]
  attack [shape=parallelogram, tool_command="bash ./attack.sh"]
  vet [shape=octagon, command="sleep 1; exit 1"]
  done [shape=Msquare]
  start -> attack -> vet -> done
}
`

// TestServeE2ESandboxAttacks: the attacks of a hostile pull request, from
// a writer's own branch and from a fork a writer approved with /kilroy
// run, all fail: no canary (a secret in the bot's environment, the key
// file, a file in the data dir, another repository's mirror) reaches a
// run branch, a check run, a comment, the log or the run page; no daemon
// survives; the mirror's config is unchanged and no filter ran; the
// verify node after the forged status file is red; the bot stays up.
func TestServeE2ESandboxAttacks(t *testing.T) {
	for _, fork := range []bool{false, true} {
		t.Run(map[bool]string{false: "writer", true: "fork"}[fork], func(t *testing.T) {
			testSandboxAttacks(t, fork)
		})
	}
}

func testSandboxAttacks(t *testing.T, fork bool) {
	needSandbox(t)
	envCanary := "sk-ant-" + strings.Repeat("Q", 40)
	t.Setenv("ANTHROPIC_API_KEY", envCanary)
	t.Setenv("KILROY_TEST_CANARY", "CANARY-ENV-9c1e")
	e := newE2E(t, e2eOptions{keyInDataDir: true,
		files: map[string]string{"main.go": mainGo, ".kilroy/ci.dot": attackDOT, "attack.sh": "exit 0\n"}})
	dataDir, _ := filepath.Abs(e.cfg.DataDir)
	os.WriteFile(filepath.Join(dataDir, "canary.txt"), []byte("CANARY-DATADIR-51f0"), 0o600)
	other := filepath.Join(dataDir, "mirrors", "octo", "secret-service.git")
	os.MkdirAll(other, 0o755)
	os.WriteFile(filepath.Join(other, "canary-mirror"), []byte("CANARY-MIRROR-a77b"), 0o644)
	e.restart() // serve reads its environment when it starts

	daemon := fmt.Sprintf("kilroy-attack-%d-%d", os.Getpid(), time.Now().UnixNano())
	files := map[string]string{"attack.sh": attackScript(dataDir, daemon)}
	var sha string
	if fork {
		mallory := e.gh.AddRepo("mallory", e2eName)
		sha = mallory.Commit(t, "main", map[string]string{"main.go": mainGo, ".kilroy/ci.dot": attackDOT,
			"attack.sh": files["attack.sh"]}, "innocent change")
		e.deliver("pull_request", e.openPR("opened", pr{number: 31, sha: sha, author: "mallory", fork: "mallory/widgets",
			files: []string{"attack.sh"}}))
		e.waitSettled(sha, "kilroy/ci")
		e.deliver("issue_comment", e.comment(31, "carol", "/kilroy run"))
		e.waitFor("the approved run to complete", func() bool {
			return len(e.named(sha, "kilroy/ci")) == 2 && allCompleted(e.checkRuns(sha))
		})
	} else {
		sha = e.repo.Commit(t, "feature-30", files, "innocent change")
		e.deliver("pull_request", e.openPR("opened", pr{number: 30, sha: sha, files: []string{"attack.sh"}}))
		e.waitSettled(sha, "kilroy/ci", "kilroy/ci/vet")
	}
	e.waitIdle()
	sum := e.newestSummary(sha)
	id := runID(sum)
	if row := nodeRow(sum.Summary, "attack"); len(row) < 3 || !strings.Contains(row[2], "success") {
		t.Fatalf("the attack node did not run to its end (row %q):\n%s", row, sum.Summary)
	}
	if vet := e.named(sha, "kilroy/ci/vet"); len(vet) != 1 || vet[0].Conclusion != "failure" || sum.Conclusion != "failure" {
		t.Errorf("a forged status file turned the failing verify node green: %s", e.describeChecks())
	}

	// What the run branch carries: the loot, cleaned of everything secret.
	branch := "kilroy/run/ci/" + id
	loot := e.repo.Git(t, "ls-tree", "-r", "--name-only", branch, "loot")
	if !strings.Contains(loot, "loot/environ.txt") {
		t.Fatalf("the run branch has no loot: the attack did not run as written:\n%s", loot)
	}
	if strings.Contains(loot, "loot/unjailed.txt") {
		t.Errorf("the attack ran outside the sandbox")
	}
	canaries := e.secrets()
	canaries["bot env key"] = envCanary
	canaries["bot env"] = "CANARY-ENV-9c1e"
	canaries["data dir file"] = "CANARY-DATADIR-51f0"
	canaries["other mirror"] = "CANARY-MIRROR-a77b"
	for _, tok := range e.gh.Tokens() {
		canaries["git credential of "+tok.Value()[:8]] = base64.StdEncoding.EncodeToString([]byte("x-access-token:" + tok.Value()))
	}
	var leaks []string
	look := func(place, text string) {
		for name, c := range canaries {
			if strings.Contains(text, c) {
				leaks = append(leaks, name+" in "+place)
			}
		}
	}
	for _, ref := range strings.Fields(e.repo.Git(t, "for-each-ref", "--format=%(refname)")) {
		for _, f := range strings.Fields(e.repo.Git(t, "ls-tree", "-r", "--name-only", ref)) {
			look(ref+":"+f, e.repo.Git(t, "show", ref+":"+f))
		}
	}
	for _, r := range e.gh.Requests() {
		look(r.Method+" "+r.Path, r.Body)
	}
	look("the log", e.logs.String())
	if u := strings.Index(sum.DetailsURL, "/runs/"); u >= 0 {
		_, page := e.get(sum.DetailsURL[u:])
		look("the run page", page)
	}
	if len(leaks) > 0 {
		t.Errorf("canaries leaked:\n%s", strings.Join(leaks, "\n"))
	}
	if strings.Contains(loot, "loot/filter.txt") {
		t.Errorf("the node wrote the shared mirror's config")
	}
	mirror := filepath.Join(dataDir, "mirrors", e2eOwner, e2eName+".git")
	if cfg, _ := os.ReadFile(filepath.Join(mirror, "config")); strings.Contains(string(cfg), "pwn") {
		t.Errorf("the mirror's config holds the node's filter:\n%s", cfg)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "pwned.txt")); err == nil {
		t.Errorf("the node's clean filter ran in the bot's git")
	}
	if left := processesNamed(daemon); len(left) > 0 {
		t.Errorf("the node's daemon outlived it: pids %v", left)
	}
	for _, ref := range strings.Fields(e.repo.Git(t, "for-each-ref", "--format=%(refname:short)", "refs/heads")) {
		if ref != "main" && !strings.HasPrefix(ref, "feature-") && !strings.HasPrefix(ref, "kilroy/run/ci/") {
			t.Errorf("a branch the bot did not push: %s", ref)
		}
	}
	if code, _ := e.get("/healthz"); code != 200 {
		t.Errorf("/healthz = %d after the attacks", code)
	}
}

// TestRunSandboxAttacks: the same attacks through `kilroy-bot run` on a
// laptop: nothing of the data dir (other runs, a planted secret) or the
// bot's environment reaches the run branch, the repository's own .git is
// not writable, no daemon survives, the verify node stays red.
func TestRunSandboxAttacks(t *testing.T) {
	needSandbox(t)
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-"+strings.Repeat("L", 40))
	dataDir := filepath.Join(t.TempDir(), "data")
	os.MkdirAll(filepath.Join(dataDir, "runs", "other-run"), 0o755)
	os.WriteFile(filepath.Join(dataDir, "canary.txt"), []byte("CANARY-DATADIR-51f0"), 0o600)
	os.WriteFile(filepath.Join(dataDir, "runs", "other-run", "canary-log"), []byte("CANARY-OTHER-RUN-3d2c"), 0o644)
	daemon := fmt.Sprintf("kilroy-attack-%d-%d", os.Getpid(), time.Now().UnixNano())
	repo := newRepo(t, map[string]string{".kilroy/ci.dot": attackDOT, "attack.sh": attackScript(dataDir, daemon)})
	configBefore, _ := os.ReadFile(filepath.Join(repo, ".git", "config"))

	code, stdout, stderr := runCmd("run", "--repo", repo, "--data-dir", dataDir)
	if code != 1 || !strings.Contains(stdout, "❌ `vet`") {
		t.Fatalf("run: exit %d, want 1 with vet failed (a forged status file must not pass it)\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if strings.Contains(stderr, "without a sandbox") {
		t.Fatalf("the run was not sandboxed:\n%s", stderr)
	}
	files := runBranchFileList(t, repo)
	if !strings.Contains(files, "loot/environ.txt") {
		t.Fatalf("the run branch has no loot: the attack did not run as written:\n%s", files)
	}
	if strings.Contains(files, "loot/unjailed.txt") {
		t.Errorf("the attack ran outside the sandbox")
	}
	branch := gitT(t, repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/kilroy/")
	for _, f := range strings.Split(files, "\n") {
		body := gitT(t, repo, "show", branch+":"+f)
		for _, canary := range []string{"CANARY-DATADIR-51f0", "CANARY-OTHER-RUN-3d2c", "sk-ant-LLLL"} {
			if strings.Contains(body, canary) {
				t.Errorf("%s on the run branch holds %q", f, canary)
			}
		}
	}
	for _, f := range []string{"loot/filter.txt"} {
		if strings.Contains(files, f) {
			t.Errorf("the run branch has %s: the attack it records succeeded", f)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(repo, ".git", "config")); string(after) != string(configBefore) {
		t.Errorf("the node changed the repository's .git/config:\n%s", after)
	}
	if left := processesNamed(daemon); len(left) > 0 {
		t.Errorf("the node's daemon outlived the run: pids %v", left)
	}
}

// TestServeE2ENodeLimits: a node that fork-bombs fails, and the kilroy/ci
// check says which sandbox limit it reached; the bot answers on.
func TestServeE2ENodeLimits(t *testing.T) {
	needSandbox(t)
	if s, err := sandbox.New(sandbox.Config{PATH: os.Getenv("PATH"), StateDir: t.TempDir()}); err != nil || !s.ProcessLimitHolds() {
		t.Skip("the process limit cannot hold here: the tests run as root and no cgroup is writable")
	}
	const bombDOT = `digraph ci {
  start [shape=Mdiamond]
  bomb [shape=parallelogram, tool_command="[ \"$(hostname)\" = kilroy-sandbox ] || exit 99; bomb() { bomb | bomb & }; bomb; sleep 2; for i in $(seq 600); do sleep 5 & done; wait"]
  done [shape=Msquare]
  start -> bomb -> done
}
`
	e := newE2E(t, e2eOptions{policy: "sandbox:\n  limits: {processes: 128}\n",
		files: map[string]string{"main.go": mainGo, ".kilroy/ci.dot": bombDOT}})
	sha := e.repo.Commit(t, "feature-32", map[string]string{"README.md": "change\n"}, "change")
	e.deliver("pull_request", e.openPR("opened", pr{number: 32, sha: sha}))
	e.waitSettled(sha, "kilroy/ci")
	e.waitIdle()
	sum := e.named(sha, "kilroy/ci")[0]
	if sum.Conclusion != "failure" || !strings.Contains(sum.Summary, "process limit reached (128 processes; sandbox.limits.processes)") {
		t.Errorf("kilroy/ci %s, want failure naming the process limit:\n%s", sum.Conclusion, sum.Summary)
	}
	if code, _ := e.get("/healthz"); code != 200 {
		t.Errorf("/healthz = %d after the fork bomb", code)
	}
}
