package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
)

// e2eWait bounds every wait of the end-to-end tests; reaching it fails.
const e2eWait = 90 * time.Second

// The repository the end-to-end tests run on: octo/widgets, installed,
// with alice (writer, the usual PR author), carol (writer) and bob (reader).
const (
	e2eOwner  = "octo"
	e2eName   = "widgets"
	e2eRepo   = e2eOwner + "/" + e2eName
	e2eRepoID = 7001
	publicURL = "https://kilroy.example"
)

// mainGo is the file the verify findings point into; line 3 column 5 is
// "x := 1".
const mainGo = "package main\n\nfunc main() {\n\tx := 1\n\t_ = x\n}\n"

// ciDOT is the pipeline of most scenarios: a tool node that leaves a
// node_modules file behind (excluded from checkpoints by policy), and a
// verify node (vetCmd) that prints a finding on main.go:3:5 and fails.
func ciDOT(vetCmd string) string {
	return fmt.Sprintf(`digraph ci {
  start [shape=Mdiamond]
  build [shape=parallelogram, tool_command="mkdir -p node_modules && echo 'module.exports = 1' > node_modules/x.js && echo built > build.txt"]
  vet [shape=octagon, command=%q]
  done [shape=Msquare]
  start -> build -> vet -> done
}
`, vetCmd)
}

// failingVet prints one finding and fails.
const failingVet = `printf 'main.go:3:5: something wrong\n'; exit 1`

// sandboxMissing says why the node sandbox cannot work on this machine,
// or "" when it can.
var sandboxMissing = sync.OnceValue(func() string {
	s, err := sandbox.New(sandbox.Config{PATH: os.Getenv("PATH"), StateDir: filepath.Join(os.TempDir(), "kilroy-e2e-sandbox-probe")})
	defer s.Close()
	if err == nil {
		err = s.SelfTest(context.Background())
	}
	if err != nil {
		return err.Error()
	}
	return ""
})

// needSandbox skips a test whose pipeline must not run outside the
// sandbox (a fork bomb, say), saying why the sandbox cannot work here.
func needSandbox(t *testing.T) {
	t.Helper()
	if why := sandboxMissing(); why != "" {
		t.Skipf("needs the node sandbox: %s", why)
	}
}

// gateRoot holds the gate files of the end-to-end tests; every serve
// under test shows it to nodes read-only (sandbox.read_only), since a
// node sees nothing else of the host's temporary directories.
var gateRoot = sync.OnceValue(func() string {
	d, err := os.MkdirTemp("", "kilroy-e2e-gates-")
	if err != nil {
		panic(err)
	}
	return d
})

// newGate returns a gate path for gatedVet, not yet created.
func newGate(t *testing.T) string {
	d, err := os.MkdirTemp(gateRoot(), "gate-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return filepath.Join(d, "gate")
}

// gatedVet is failingVet once the file gate exists: the run stays in its
// vet node until the test creates it. The wait is the pipeline's, not the
// test's: the test polls the checks with a deadline.
func gatedVet(gate string) string {
	return fmt.Sprintf(`while [ ! -e %s ]; do sleep 0.05; done; %s`, gate, failingVet)
}

// e2e is the real serve stack on 127.0.0.1 against the fake GitHub.
type e2e struct {
	t       *testing.T
	gh      *ghapptest.Server
	repo    *ghapptest.Repo
	secret  []byte
	cfg     serveConfig
	logs    *syncBuffer
	base    string // http://127.0.0.1:port
	stopped chan error
	cancel  context.CancelFunc
	ids     atomic.Int64
}

type e2eOptions struct {
	// files are the repository's main branch (main.go and .kilroy/ci.dot
	// with failingVet by default).
	files map[string]string
	// policy is the server policy file's content; "" for none.
	policy string
	// keyInDataDir keeps the App's key file in the data dir, where the
	// worktrees are too, instead of a directory of its own.
	keyInDataDir bool
	// env is serve's own environment besides its settings.
	env map[string]string
	// databaseURL is a shared queue's (--database-url); "" for SQLite.
	databaseURL string
	// staleAfter shortens how long a dead replica's runs wait for another.
	staleAfter time.Duration
	// deferStart leaves serve for the test to start (e.start).
	deferStart bool
	// dataDir is serve's data dir; "" for one in a temporary directory.
	dataDir string
}

// newE2E seeds the fake GitHub and starts serve on it.
func newE2E(t *testing.T, o e2eOptions) *e2e {
	t.Helper()
	gh := ghapptest.New(t)
	e := &e2e{t: t, gh: gh, repo: gh.AddRepo(e2eOwner, e2eName), secret: []byte("e2e-webhook-secret-" + t.Name()),
		logs: &syncBuffer{}}
	files := o.files
	if files == nil {
		files = map[string]string{"main.go": mainGo, ".kilroy/ci.dot": ciDOT(failingVet)}
	}
	e.repo.Commit(t, "main", files, "initial")
	gh.SetPermission(e2eOwner, e2eName, "alice", "write")
	gh.SetPermission(e2eOwner, e2eName, "carol", "write")
	gh.SetPermission(e2eOwner, e2eName, "bob", "read")

	dir := t.TempDir()
	dataDir := o.dataDir
	if dataDir == "" {
		dataDir = filepath.Join(dir, "data")
	}
	args := []string{"--listen", "127.0.0.1:0", "--data-dir", dataDir,
		"--github-url", gh.APIURL(), "--public-url", publicURL, "--workers", "2"}
	policy := o.policy
	if !strings.Contains(policy, "\nsandbox:") && !strings.HasPrefix(policy, "sandbox:") {
		policy += "\nsandbox:\n  read_only: [" + gateRoot() + "]\n"
	}
	p := filepath.Join(dir, "policy.yml")
	if err := os.WriteFile(p, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	args = append(args, "--config", p)
	if o.databaseURL != "" {
		args = append(args, "--database-url", o.databaseURL)
	}
	keyFile := gh.PrivateKeyFile(t)
	if o.keyInDataDir {
		keyFile = filepath.Join(dir, "data", "app.private-key.pem")
		if err := os.MkdirAll(filepath.Dir(keyFile), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(keyFile, gh.PrivateKeyPEM(), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := loadServeConfig(args, envOf(map[string]string{
		"KILROY_APP_ID":           fmt.Sprint(gh.AppID()),
		"KILROY_PRIVATE_KEY_FILE": keyFile,
		"KILROY_WEBHOOK_SECRET":   string(e.secret),
	}))
	if err != nil {
		t.Fatal(err)
	}
	// A run cut short by a test's end is handed back quickly.
	cfg.RunDrain = time.Second
	cfg.StaleAfter = o.staleAfter
	if why := sandboxMissing(); why != "" {
		t.Logf("serve runs nodes without the sandbox here (--insecure-no-sandbox): %s", why)
		cfg.InsecureNoSandbox = true
	}
	e.cfg = cfg
	t.Cleanup(e.stop)
	if !o.deferStart {
		e.start()
	}
	return e
}

// start runs serve as runServe does, with productionWiring.
func (e *e2e) start() {
	e.t.Helper()
	ctx, cancel := context.WithCancel(withLogger(context.Background(), newServeLogger(e.logs, e.cfg)))
	deps, err := wireServe(ctx, e.cfg, productionWiring())
	if err != nil {
		cancel()
		e.t.Fatalf("wireServe: %v", err)
	}
	srv, err := buildServer(ctx, e.cfg, deps)
	if err != nil {
		cancel()
		e.t.Fatalf("buildServer: %v", err)
	}
	e.cancel, e.stopped, e.base = cancel, make(chan error, 1), "http://"+srv.Addr().String()
	// The fake GitHub delivers (and redelivers) to this serve; a test
	// whose GitHub is not the fake has none.
	if e.gh != nil {
		e.gh.SetWebhook(e.base+"/webhooks/github", e.secret)
	}
	go func() { e.stopped <- srv.run(ctx) }()
}

// stop shuts serve down gracefully and waits for it; it may be called
// more than once.
func (e *e2e) stop() {
	e.t.Helper()
	if e.cancel == nil {
		return
	}
	e.cancel()
	e.cancel = nil
	select {
	case err := <-e.stopped:
		if err != nil {
			e.t.Errorf("serve stopped with %v", err)
		}
	case <-time.After(e2eWait):
		e.t.Fatalf("serve did not stop within %s", e2eWait)
	}
}

// restart stops serve and starts it again on the same data dir.
func (e *e2e) restart() {
	e.t.Helper()
	e.stop()
	e.start()
}

// hook is a delivery as GitHub sends it: the exact bytes, signed.
func (e *e2e) send(event, deliveryID string, body []byte) (int, string) {
	e.t.Helper()
	return e.do(e.gh.Hook(e.secret).Request(e.t, e.base+"/webhooks/github", event, deliveryID, body))
}

func (e *e2e) do(req *http.Request) (int, string) {
	e.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// deliver sends a delivery under a fresh id and wants it queued.
func (e *e2e) deliver(event string, body []byte) {
	e.t.Helper()
	id := fmt.Sprintf("%s-%d", strings.ReplaceAll(e.t.Name(), "/", "-"), e.ids.Add(1))
	if code, resp := e.send(event, id, body); code != http.StatusAccepted {
		e.t.Fatalf("%s delivery %s = %d %s, want 202", event, id, code, resp)
	}
}

func (e *e2e) get(path string) (int, string) {
	e.t.Helper()
	req, err := http.NewRequestWithContext(e.t.Context(), http.MethodGet, e.base+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.do(req)
}

// payload is a real GitHub payload from the shared fixtures, edited so
// that it describes the fake's octo/widgets: repository, installation and
// whatever edit sets. The edited JSON is what is sent and signed.
func (e *e2e) payload(name string, edit func(p jsonObject)) []byte {
	e.t.Helper()
	var p jsonObject
	if err := json.Unmarshal(ghapptest.LoadPayload(e.t, name), &p); err != nil {
		e.t.Fatalf("payload %s: %v", name, err)
	}
	p.set("repository", e.repoJSON(e2eRepo, e2eRepoID))
	p.set("installation", jsonObject{"id": e.gh.InstallationID(e2eOwner)})
	p.set("sender", jsonObject{"login": "alice", "type": "User"})
	if edit != nil {
		edit(p)
	}
	b, err := json.Marshal(p)
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

func (e *e2e) repoJSON(full string, id int64) jsonObject {
	owner, name, _ := strings.Cut(full, "/")
	return jsonObject{"id": id, "name": name, "full_name": full, "default_branch": "main",
		"owner": jsonObject{"login": owner, "type": "Organization"}, "clone_url": e.gh.CloneURL(owner, name)}
}

// pr describes a pull request for prPayload and the fake.
type pr struct {
	number int
	sha    string
	author string
	fork   string // head repository full name when it is a fork
	base   string // base branch; "" is main
	files  []string
}

// openPR registers p with the fake and returns the edited
// pull_request/<action> payload for it: number, head (SHA, repository:
// the base one, or a fork's with another id), base (main by default),
// author.
func (e *e2e) openPR(action string, p pr) []byte {
	e.t.Helper()
	if p.author == "" {
		p.author = "alice"
	}
	if p.files == nil {
		p.files = []string{"main.go"}
	}
	if p.base == "" {
		p.base = "main"
	}
	e.gh.PutPull(e2eOwner, e2eName, ghapptest.Pull{Number: p.number, HeadSHA: p.sha, Author: p.author,
		BaseRef: p.base, HeadRepo: p.fork, Files: p.files})
	head, headID := e2eRepo, int64(e2eRepoID)
	if p.fork != "" {
		head, headID = p.fork, e2eRepoID+1
	}
	return e.payload("pull_request/"+action+".payload.json", func(o jsonObject) {
		o.set("number", p.number)
		pull := o.obj("pull_request")
		pull.set("number", p.number)
		pull.set("draft", false)
		pull.set("user", jsonObject{"login": p.author, "type": "User"})
		pull.obj("head").set("sha", p.sha)
		pull.obj("head").set("ref", fmt.Sprintf("feature-%d", p.number))
		pull.obj("head").set("repo", e.repoJSON(head, headID))
		pull.obj("base").set("ref", p.base)
		pull.obj("base").set("repo", e.repoJSON(e2eRepo, e2eRepoID))
		o.set("sender", jsonObject{"login": p.author, "type": "User"})
	})
}

// comment records a comment by user on pull request number with the fake
// and returns the issue_comment payload for it. The shared example is a
// comment on an issue: the copy gets issue.pull_request, which GitHub
// sets on pull request comments, and the fake's comment id.
//
// The comment is written at the next whole second of the clock: GitHub's
// created_at has whole seconds, and the bot counts a head it heard of
// within the comment's second as pushed after it. Waiting for the clock,
// not for the bot, puts the comment after everything the test did before.
func (e *e2e) comment(number int, user, body string) []byte {
	e.t.Helper()
	at := time.Now().Truncate(time.Second).Add(time.Second)
	<-time.After(time.Until(at))
	c := e.gh.AddComment(e2eOwner, e2eName, ghapptest.Comment{Issue: number, User: user, Body: body, Created: at.UTC()})
	return e.payload("issue_comment/created.payload.json", func(o jsonObject) {
		issue := o.obj("issue")
		issue.set("number", number)
		issue.set("user", jsonObject{"login": "alice", "type": "User"})
		issue.set("pull_request", jsonObject{"url": fmt.Sprintf("%srepos/%s/pulls/%d", e.gh.APIURL(), e2eRepo, number)})
		cm := o.obj("comment")
		cm.set("id", c.ID)
		cm.set("body", body)
		cm.set("user", jsonObject{"login": user, "type": "User"})
		cm.set("created_at", c.Created.Format(time.RFC3339))
		delete(cm, "performed_via_github_app")
		o.set("sender", jsonObject{"login": user, "type": "User"})
	})
}

// checkRuns lists the fake's check runs on sha, oldest first.
func (e *e2e) checkRuns(sha string) []*ghapptest.CheckRun {
	var out []*ghapptest.CheckRun
	for _, r := range e.gh.CheckRuns(e2eOwner, e2eName) {
		if r.HeadSHA == sha {
			out = append(out, r)
		}
	}
	return out
}

// named returns the check runs on sha named name, oldest first.
func (e *e2e) named(sha, name string) []*ghapptest.CheckRun {
	var out []*ghapptest.CheckRun
	for _, r := range e.checkRuns(sha) {
		if r.Name == name {
			out = append(out, r)
		}
	}
	return out
}

// waitFor polls cond until it holds; reaching e2eWait fails the test
// with what it waited for and the fake's check runs.
func (e *e2e) waitFor(what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(e2eWait)
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out after %s waiting for %s\ncheck runs:\n%s\nlogs:\n%s", e2eWait, what,
				e.describeChecks(), e.logs.String())
		}
		<-tick.C
	}
}

// waitSettled waits until sha has at least want check runs with names
// and every check run on it is completed, and returns them.
func (e *e2e) waitSettled(sha string, names ...string) []*ghapptest.CheckRun {
	e.t.Helper()
	e.waitFor(fmt.Sprintf("check runs %v on %.7s to complete", names, sha), func() bool {
		runs := e.checkRuns(sha)
		for _, n := range names {
			if !slices.ContainsFunc(runs, func(r *ghapptest.CheckRun) bool { return r.Name == n }) {
				return false
			}
		}
		return allCompleted(runs)
	})
	return e.checkRuns(sha)
}

// waitIdle waits until no run is queued or running (kilroy_queue_depth
// is 0: every run handler has returned, its final push made) and every
// git token the runs and events minted is revoked, which the last handler
// does as it returns: nothing is left running on the fake. The tokens
// alone do not say it: a resumed run mints none until it pushes, and its
// checks may complete before its final push.
func (e *e2e) waitIdle() {
	e.t.Helper()
	e.waitFor("no run queued or running and every repository token revoked", func() bool {
		if code, metrics := e.get("/metrics"); code != http.StatusOK || !strings.Contains(metrics, "\nkilroy_queue_depth 0\n") {
			return false
		}
		for _, tok := range e.gh.Tokens() {
			if tok.Repositories != nil && !tok.Revoked {
				return false
			}
		}
		return true
	})
}

func allCompleted(runs []*ghapptest.CheckRun) bool {
	for _, r := range runs {
		if r.Status != "completed" {
			return false
		}
	}
	return true
}

// assertAllCompleted fails for any check run on the fake that is not
// completed.
func (e *e2e) assertAllCompleted() {
	e.t.Helper()
	for _, r := range e.gh.CheckRuns(e2eOwner, e2eName) {
		if r.Status != "completed" {
			e.t.Errorf("check run %s (%s) on %.7s left %s", r.Name, r.ExternalID, r.HeadSHA, r.Status)
		}
	}
}

func (e *e2e) describeChecks() string {
	var b strings.Builder
	for _, r := range e.gh.CheckRuns(e2eOwner, e2eName) {
		fmt.Fprintf(&b, "  %s %s %.7s %s/%s %q\n", r.Name, r.ExternalID, r.HeadSHA, r.Status, r.Conclusion, r.Title)
	}
	return b.String()
}

// botComments are the comments the App posted.
func (e *e2e) botComments() []string {
	var out []string
	for _, c := range e.gh.Comments(e2eOwner, e2eName) {
		if c.ByBot {
			out = append(out, c.Body)
		}
	}
	return out
}

// runID is the run of a kilroy/<pipeline> check: its external id.
func runID(r *ghapptest.CheckRun) string { return r.ExternalID }

// jsonObject is a decoded JSON object being edited.
type jsonObject map[string]any

func (o jsonObject) set(k string, v any) { o[k] = v }

// obj returns the object at k, creating it when absent.
func (o jsonObject) obj(k string) jsonObject {
	if m, ok := o[k].(map[string]any); ok {
		return m
	}
	if m, ok := o[k].(jsonObject); ok {
		return m
	}
	m := jsonObject{}
	o[k] = m
	return m
}

// syncBuffer is a bytes.Buffer for concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// touch creates path, releasing a gated pipeline.
func touch(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitNode waits until the run of kilroy/ci on sha has started node: its
// stage directory exists in the run directory. (The checks say so too,
// but in-progress updates are throttled to one per check per 10 s.)
func (e *e2e) waitNode(sha, node string) string {
	e.t.Helper()
	var id string
	e.waitFor("kilroy/ci on "+sha[:7]+" to reach "+node, func() bool {
		runs := e.named(sha, "kilroy/ci")
		if len(runs) == 0 {
			return false
		}
		id = runID(runs[len(runs)-1])
		_, err := os.Stat(filepath.Join(e.cfg.DataDir, "runs", id, "nodes", node))
		return err == nil
	})
	return id
}
