package main

// End-to-end tests of `kilroy-bot serve`: the real server (webhook, queue
// on SQLite, runner, checks publisher, git) on 127.0.0.1 against the fake
// GitHub of ghapptest, driven by real webhook payloads from the shared
// fixtures, signed over the exact bytes sent. One test per scenario a user
// of the App sees.
//
// The shared payloads describe other repositories; every test sends an
// edited copy whose repository, installation, SHAs and logins match the
// fake (see e2e.payload), and says where it edits more.

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
	"github.com/kilroy-bot/kilroy-bot/runpage"
)

// TestServeE2EPullRequestOpened: a writer opens a pull request on a
// repository with .kilroy/ci.dot. The kilroy/ci check fails with the node
// table, kilroy/ci/vet fails with its finding annotated on main.go line 3,
// the run branch has one commit per executed node and no node_modules, and
// the run's page and metrics show it.
func TestServeE2EPullRequestOpened(t *testing.T) {
	e := newE2E(t, e2eOptions{})
	sha := e.repo.Commit(t, "feature-1", map[string]string{"README.md": "change\n"}, "change")
	e.deliver("pull_request", e.openPR("opened", pr{number: 1, sha: sha}))

	runs := e.waitSettled(sha, "kilroy/ci", "kilroy/ci/vet")
	e.waitIdle() // the run has pushed its branch for the last time
	if len(runs) != 2 {
		t.Fatalf("%d check runs on the head, want kilroy/ci and kilroy/ci/vet:\n%s", len(runs), e.describeChecks())
	}
	sum, vet := e.named(sha, "kilroy/ci")[0], e.named(sha, "kilroy/ci/vet")[0]
	if sum.Conclusion != "failure" || vet.Conclusion != "failure" {
		t.Errorf("conclusions: kilroy/ci %s, kilroy/ci/vet %s; want failure, failure", sum.Conclusion, vet.Conclusion)
	}
	for _, node := range []string{"| Node |", "`start`", "`build`", "`vet`", "`done`"} {
		if !strings.Contains(sum.Summary, node) {
			t.Errorf("kilroy/ci summary lacks %q:\n%s", node, sum.Summary)
		}
	}
	id := runID(sum)
	// details_url is the run page with the token that opens it, made
	// with the webhook secret.
	keys, err := runpage.NewKeys(e.secret)
	if err != nil {
		t.Fatal(err)
	}
	details, err := url.Parse(sum.DetailsURL)
	if err != nil || details.Scheme+"://"+details.Host != publicURL || details.Path != "/runs/"+id ||
		!keys.Valid(id, details.Query().Get("t")) || len(details.Query()) != 1 {
		t.Errorf("details_url %q, want %s/runs/%s?t=<a valid token>", sum.DetailsURL, publicURL, id)
	}
	if vet.DetailsURL != sum.DetailsURL {
		t.Errorf("kilroy/ci/vet details_url %q, want kilroy/ci's %q", vet.DetailsURL, sum.DetailsURL)
	}
	if vet.ExternalID != id+"/vet" {
		t.Errorf("kilroy/ci/vet external_id %q, want %q", vet.ExternalID, id+"/vet")
	}
	if len(vet.Annotations) != 1 {
		t.Fatalf("kilroy/ci/vet has %d annotations, want 1: %+v", len(vet.Annotations), vet.Annotations)
	}
	if a := vet.Annotations[0]; a.Path != "main.go" || a.StartLine != 3 || a.EndLine != 3 || a.StartColumn != 5 ||
		a.AnnotationLevel != "failure" || !strings.Contains(a.Message, "something wrong") {
		t.Errorf("annotation %+v, want a failure on main.go:3:5 saying something wrong", a)
	}

	// The run branch on the fake: one commit per executed node, no
	// node_modules, the tool node's other output kept.
	branch := "kilroy/run/ci/" + id
	log := e.repo.Git(t, "log", "--format=%s", sha+".."+branch)
	subjects := strings.Split(strings.TrimSpace(log), "\n")
	wantSubjects := []string{
		fmt.Sprintf("kilroy(%s): vet (fail)", id),
		fmt.Sprintf("kilroy(%s): build (success)", id),
		fmt.Sprintf("kilroy(%s): start (success)", id),
	}
	if strings.Join(subjects, "\n") != strings.Join(wantSubjects, "\n") {
		t.Errorf("run branch commits:\n%s\nwant:\n%s", log, strings.Join(wantSubjects, "\n"))
	}
	tree := e.repo.Git(t, "ls-tree", "-r", "--name-only", branch)
	if strings.Contains(tree, "node_modules") || !strings.Contains(tree, "build.txt") {
		t.Errorf("run branch tree has node_modules or lacks build.txt:\n%s", tree)
	}

	code, page := e.get(details.RequestURI())
	if code != http.StatusOK || !strings.Contains(page, "vet") {
		t.Errorf("GET the details_url %s = %d, want 200 with the node table:\n%.500s", details.RequestURI(), code, page)
	}
	// The page shows the summary check's report, rendered, and links what
	// the run tested.
	for _, want := range []string{"<summary>The check run's report", "<h2>kilroy/ci: ", "<th>Node</th><th>Kind</th>", "<strong>Failed</strong>",
		"/octo/widgets\">octo/widgets</a>", "/octo/widgets/pull/1\">#1</a>", "/octo/widgets/commit/" + sha + "\"><code>" + sha[:7],
		"<th>Total time</th>"} {
		if !strings.Contains(page, want) {
			t.Errorf("run page lacks %q:\n%s", want, page)
		}
	}
	if code, page := e.get("/runs/" + id); code != http.StatusNotFound || strings.Contains(page, "vet") {
		t.Errorf("GET /runs/%s without its token = %d, want 404 without the page:\n%.500s", id, code, page)
	}
	if tok := details.Query().Get("t"); tok == "" || strings.Contains(e.logs.String(), tok) {
		t.Errorf("the serve log carries the run page token %q", tok)
	}
	_, metrics := e.get("/metrics")
	for _, series := range []string{`kilroy_runs_total{conclusion="failure"} 1`, `kilroy_queue_depth 0`, `kilroy_intake_depth 0`,
		`kilroy_webhook_deliveries_total{event="pull_request",result="queued"} 1`} {
		if !strings.Contains(metrics, series) {
			t.Errorf("/metrics lacks %s", series)
		}
	}
	for _, tok := range e.gh.Tokens() {
		if tok.Repositories != nil && (len(tok.Repositories) != 1 || tok.Repositories[0] != e2eRepo) {
			t.Errorf("git token scoped to %v, want only %s", tok.Repositories, e2eRepo)
		}
	}
}

// TestServeE2EDuplicateAndCoalesced: a redelivered id is answered 200
// duplicate and enqueues nothing; a second delivery for the same head
// while its run is going coalesces into that run.
func TestServeE2EDuplicateAndCoalesced(t *testing.T) {
	gate := newGate(t)
	e := newE2E(t, e2eOptions{files: map[string]string{"main.go": mainGo, ".kilroy/ci.dot": ciDOT(gatedVet(gate))}})
	sha := e.repo.Commit(t, "feature-2", map[string]string{"README.md": "change\n"}, "change")
	body := e.openPR("opened", pr{number: 2, sha: sha})

	if code, resp := e.send("pull_request", "dup-1", body); code != http.StatusAccepted {
		t.Fatalf("first delivery = %d %s, want 202", code, resp)
	}
	code, resp := e.send("pull_request", "dup-1", body)
	if code != http.StatusOK || !strings.Contains(resp, `"status":"duplicate"`) {
		t.Fatalf("redelivery = %d %s, want 200 duplicate", code, resp)
	}
	e.waitNode(sha, "vet")
	// Another delivery of the same head (GitHub sends reopened, or a
	// second hook): decided while the run is in its vet node.
	e.deliver("pull_request", e.openPR("reopened", pr{number: 2, sha: sha}))
	e.waitFor("both deliveries to be decided", func() bool { return e.permissionLookups("alice") == 2 })
	touch(t, gate)

	e.waitSettled(sha, "kilroy/ci", "kilroy/ci/vet")
	e.waitIdle()
	if n := len(e.named(sha, "kilroy/ci")); n != 1 {
		t.Errorf("%d kilroy/ci check runs, want 1: the deliveries coalesce into one run\n%s", n, e.describeChecks())
	}
	if branches := e.repo.Git(t, "branch", "--list", "kilroy/run/*"); strings.Count(branches, "kilroy/run/") != 1 {
		t.Errorf("run branches:\n%s\nwant one", branches)
	}
}

// permissionLookups counts the collaborator-permission calls for user:
// every pull_request event decided asks for its author's.
func (e *e2e) permissionLookups(user string) int {
	n := 0
	for _, r := range e.gh.Requests() {
		if r.Method == http.MethodGet && strings.HasSuffix(r.Path, "/collaborators/"+user+"/permission") {
			n++
		}
	}
	return n
}

// TestServeE2EIngress is the webhook's edge on the real stack, with the
// project's own fixtures (webhook/testdata), so it runs on a plain clone
// without the shared GitHub fixtures: a signed delivery is queued, its
// redelivery is a duplicate; bad, missing and SHA-1-only signatures are
// 401; a body over 25 MiB is 413; the queue shows in /readyz and /metrics.
func TestServeE2EIngress(t *testing.T) {
	// No GitHub call is made: the deliveries queued are a ping and an
	// installation change, which are only recorded.
	github := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(github.Close)
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "app.pem")
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY",
		Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600); err != nil {
		t.Fatal(err)
	}
	secret := []byte("ingress-webhook-secret")
	cfg, err := loadServeConfig([]string{"--listen", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "data"),
		"--github-url", github.URL + "/api/v3/"}, envOf(map[string]string{
		"KILROY_APP_ID": "4242", "KILROY_PRIVATE_KEY_FILE": keyFile, "KILROY_WEBHOOK_SECRET": string(secret),
	}))
	if err != nil {
		t.Fatal(err)
	}
	e := &e2e{t: t, secret: secret, cfg: cfg, logs: &syncBuffer{}}
	e.start()
	t.Cleanup(e.stop)
	fixture := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "..", "webhook", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	hook := ghapptest.Hook{Secret: secret, AppID: 4242}
	url := e.base + "/webhooks/github"
	ping, pull := fixture("ping.json"), fixture("pull_request.opened.json")

	for _, tc := range []struct {
		name   string
		req    func() *http.Request
		code   int
		status string
	}{
		{"signed ping", func() *http.Request { return hook.Request(t, url, "ping", "ingress-1", ping) },
			http.StatusAccepted, "queued"},
		{"redelivered ping", func() *http.Request { return hook.Request(t, url, "ping", "ingress-1", ping) },
			http.StatusOK, "duplicate"},
		{"installation change", func() *http.Request {
			return hook.Request(t, url, "installation_repositories", "ingress-2", fixture("installation_repositories.removed.json"))
		}, http.StatusAccepted, "queued"},
		{"bad signature", func() *http.Request {
			return ghapptest.Hook{Secret: []byte("another-secret")}.Request(t, url, "pull_request", "ingress-3", pull)
		}, http.StatusUnauthorized, "error"},
		{"body changed after signing", func() *http.Request {
			r := hook.Request(t, url, "pull_request", "ingress-4", pull)
			r.Header.Set("X-Hub-Signature-256", ghapptest.Signature256(secret, append(bytes.Clone(pull), ' ')))
			return r
		}, http.StatusUnauthorized, "error"},
		{"missing signature", func() *http.Request {
			r := hook.Request(t, url, "pull_request", "ingress-5", pull)
			r.Header.Del("X-Hub-Signature-256")
			return r
		}, http.StatusUnauthorized, "error"},
		{"SHA-1 signature only", func() *http.Request {
			r := ghapptest.Hook{Secret: secret, SHA1: true}.Request(t, url, "pull_request", "ingress-6", pull)
			r.Header.Del("X-Hub-Signature-256")
			return r
		}, http.StatusUnauthorized, "error"},
		{"body over 25 MiB", func() *http.Request {
			big := append(bytes.Repeat([]byte(" "), 25<<20), pull...)
			return hook.Request(t, url, "pull_request", "ingress-7", big)
		}, http.StatusRequestEntityTooLarge, "error"},
	} {
		code, body := e.do(tc.req())
		if code != tc.code || !strings.Contains(body, `"status":"`+tc.status+`"`) {
			t.Errorf("%s: %d %s, want %d %s", tc.name, code, body, tc.code, tc.status)
		}
	}
	if code, body := e.get("/readyz"); code != http.StatusOK {
		t.Errorf("/readyz = %d %s, want 200", code, body)
	}
	_, metrics := e.get("/metrics")
	for _, series := range []string{
		`kilroy_webhook_deliveries_total{event="ping",result="queued"} 1`,
		`kilroy_webhook_deliveries_total{event="ping",result="duplicate"} 1`,
		`kilroy_webhook_deliveries_total{event="pull_request",result="unauthorized"} 4`,
		`kilroy_webhook_deliveries_total{event="pull_request",result="too_large"} 1`,
		"kilroy_queue_depth 0",
	} {
		if !strings.Contains(metrics, series) {
			t.Errorf("/metrics lacks %s", series)
		}
	}
	e.stop()
	if strings.Contains(e.logs.String(), string(secret)) {
		t.Error("the logs hold the webhook secret")
	}
}

// TestServeE2ECommentPermission: `/kilroy run` from a reader gets a reply
// and runs nothing; from a writer it is acknowledged and runs.
func TestServeE2ECommentPermission(t *testing.T) {
	e := newE2E(t, e2eOptions{})
	sha := e.repo.Commit(t, "feature-3", map[string]string{"README.md": "change\n"}, "change")
	// The pull request exists, but its opening was not delivered here.
	e.gh.PutPull(e2eOwner, e2eName, ghapptest.Pull{Number: 3, HeadSHA: sha, Author: "alice", BaseRef: "main", Files: []string{"README.md"}})

	e.deliver("issue_comment", e.comment(3, "bob", "/kilroy run"))
	e.waitFor("a reply to bob", func() bool { return len(e.botComments()) == 1 })
	if c := e.botComments()[0]; !strings.Contains(c, "@bob") || !strings.Contains(c, "write access") {
		t.Errorf("reply to a reader: %q, want it to say only writers may run", c)
	}
	e.waitIdle()
	if runs := e.checkRuns(sha); len(runs) != 0 {
		t.Fatalf("a reader's command made check runs:\n%s", e.describeChecks())
	}

	e.deliver("issue_comment", e.comment(3, "carol", "/kilroy run"))
	e.waitSettled(sha, "kilroy/ci", "kilroy/ci/vet")
	if sum := e.named(sha, "kilroy/ci"); len(sum) != 1 || sum[0].Conclusion != "failure" {
		t.Errorf("a writer's command: kilroy/ci %+v, want one, failed at vet", sum)
	}
	e.waitFor("the eyes reaction on carol's comment", func() bool {
		for _, r := range e.gh.Reactions(e2eOwner, e2eName) {
			if r.Content == "eyes" {
				return true
			}
		}
		return false
	})
	if n := len(e.botComments()); n != 1 {
		t.Errorf("%d bot comments, want only the reply to bob: %q", n, e.botComments())
	}
}

// TestServeE2EForkGated: a pull request from a fork does not run; its
// kilroy/ci check asks for approval. A writer's `/kilroy run` then runs
// the fork's head with the base branch's pipeline, not the fork's edited
// one, and the summary says the pull request changes .kilroy/.
func TestServeE2EForkGated(t *testing.T) {
	e := newE2E(t, e2eOptions{})
	fork := e.gh.AddRepo("mallory", e2eName)
	// The fork's pipeline would pass everything and print the environment.
	forkDOT := ciDOT("env; exit 0")
	sha := fork.Commit(t, "main", map[string]string{"main.go": mainGo, ".kilroy/ci.dot": forkDOT}, "fork change")
	// An edited copy: GitHub's example is not from a fork; head.repo is
	// mallory/widgets, another repository id.
	e.deliver("pull_request", e.openPR("opened", pr{number: 4, sha: sha, author: "mallory", fork: "mallory/widgets",
		files: []string{".kilroy/ci.dot"}}))

	e.waitSettled(sha, "kilroy/ci")
	gated := e.named(sha, "kilroy/ci")
	if len(gated) != 1 || gated[0].Conclusion != "action_required" || !strings.Contains(gated[0].Summary, "/kilroy run") {
		t.Fatalf("fork pull request: %s, want kilroy/ci action_required explaining /kilroy run", e.describeChecks())
	}
	if n := len(e.named(sha, "kilroy/ci/vet")); n != 0 {
		t.Errorf("%d kilroy/ci/vet checks on a gated pull request, want none", n)
	}

	e.deliver("issue_comment", e.comment(4, "carol", "/kilroy run"))
	e.waitFor("the approved run to complete", func() bool {
		return len(e.named(sha, "kilroy/ci")) == 2 && allCompleted(e.checkRuns(sha))
	})
	run := e.named(sha, "kilroy/ci")[1]
	if run.Conclusion != "failure" {
		t.Errorf("approved run: %s, want failure (the base branch's vet fails)", run.Conclusion)
	}
	if !strings.Contains(run.Summary, "Note:") || !strings.Contains(run.Summary, ".kilroy/ci.dot") ||
		!strings.Contains(run.Summary, "base branch") {
		t.Errorf("summary does not say the run used the base branch's pipelines:\n%s", run.Summary)
	}
	vet := e.named(sha, "kilroy/ci/vet")
	if len(vet) != 1 || len(vet[0].Annotations) != 1 {
		t.Errorf("kilroy/ci/vet of the approved run: %+v, want one with the base pipeline's finding", vet)
	}
	e.waitIdle()
}

// TestServeE2ESupersede: a push to a pull request whose run is going
// cancels that run; its checks complete cancelled, "superseded by <sha>",
// and the new head's run goes on.
func TestServeE2ESupersede(t *testing.T) {
	gate := newGate(t)
	e := newE2E(t, e2eOptions{files: map[string]string{"main.go": mainGo, ".kilroy/ci.dot": ciDOT(gatedVet(gate))}})
	old := e.repo.Commit(t, "feature-5", map[string]string{"README.md": "one\n"}, "one")
	e.deliver("pull_request", e.openPR("opened", pr{number: 5, sha: old}))
	e.waitNode(old, "vet")

	head := e.repo.Commit(t, "feature-5", map[string]string{"README.md": "two\n"}, "two")
	e.deliver("pull_request", e.openPR("synchronize", pr{number: 5, sha: head}))
	for _, r := range e.waitSettled(old, "kilroy/ci", "kilroy/ci/vet") {
		if r.Conclusion != "cancelled" || !strings.Contains(r.Title+r.Summary, "superseded by "+head) {
			t.Errorf("%s on the old head: %s %q, want cancelled, superseded by %s", r.Name, r.Conclusion, r.Title, head)
		}
	}
	touch(t, gate)
	for _, r := range e.waitSettled(head, "kilroy/ci", "kilroy/ci/vet") {
		if r.Conclusion != "failure" {
			t.Errorf("%s on the new head: %s, want failure", r.Name, r.Conclusion)
		}
	}
	e.waitIdle()
	e.assertAllCompleted()
}

// TestServeE2ERerun: the Re-run button of a check (check_run rerequested)
// and of the suite (check_suite rerequested) run the check's head again.
func TestServeE2ERerun(t *testing.T) {
	e := newE2E(t, e2eOptions{})
	sha := e.repo.Commit(t, "feature-6", map[string]string{"README.md": "change\n"}, "change")
	e.deliver("pull_request", e.openPR("opened", pr{number: 6, sha: sha}))
	first := e.waitSettled(sha, "kilroy/ci")
	e.waitIdle()
	sum := e.named(sha, "kilroy/ci")[0]

	// Edited copy: the check run is ours (app id, name, external id, head
	// SHA); pull_requests stays empty, as GitHub sends it for forks, so the
	// bot finds the pull request from the head SHA it recorded.
	e.deliver("check_run", e.payload("check_run/rerequested.payload.json", func(o jsonObject) {
		cr := o.obj("check_run")
		cr.set("name", sum.Name)
		cr.set("head_sha", sha)
		cr.set("external_id", sum.ExternalID)
		cr.set("app", jsonObject{"id": e.gh.AppID(), "slug": e.gh.AppSlug()})
		cr.set("pull_requests", []any{})
		cr.obj("check_suite").set("head_sha", sha)
		delete(o, "organization")
	}))
	e.waitFor("the check_run re-run to complete", func() bool {
		return len(e.named(sha, "kilroy/ci")) == 2 && allCompleted(e.checkRuns(sha))
	})
	e.waitIdle()

	// Edited copy: our App's suite on the head, listing the pull request.
	e.deliver("check_suite", e.payload("check_suite/rerequested.payload.json", func(o jsonObject) {
		cs := o.obj("check_suite")
		cs.set("head_sha", sha)
		cs.set("app", jsonObject{"id": e.gh.AppID(), "slug": e.gh.AppSlug()})
		cs.set("pull_requests", []any{jsonObject{"number": 6}})
	}))
	e.waitFor("the check_suite re-run to complete", func() bool {
		return len(e.named(sha, "kilroy/ci")) == 3 && allCompleted(e.checkRuns(sha))
	})
	e.waitIdle()
	ids := map[string]bool{}
	for _, r := range e.named(sha, "kilroy/ci") {
		ids[r.ExternalID] = true
		if r.Conclusion != "failure" {
			t.Errorf("run %s: %s, want failure", r.ExternalID, r.Conclusion)
		}
	}
	if len(ids) != 3 || len(first) != 2 {
		t.Errorf("runs %v, want three distinct runs", ids)
	}
}

// TestServeE2EInvalidPipeline: a pipeline that does not validate fails a
// kilroy/config check with an annotation on the offending line; nothing
// runs.
func TestServeE2EInvalidPipeline(t *testing.T) {
	e := newE2E(t, e2eOptions{})
	bad := "digraph ci {\n  start [shape=Mdiamond]\n  done [shape=Msquare]\n  start -> buidl\n  buidl -> done\n}\n"
	sha := e.repo.Commit(t, "feature-7", map[string]string{".kilroy/ci.dot": bad}, "break the pipeline")
	e.deliver("pull_request", e.openPR("opened", pr{number: 7, sha: sha, files: []string{".kilroy/ci.dot"}}))
	e.assertConfigCheck(sha, ".kilroy/ci.dot", 4)
}

// TestServeE2EInvalidConfig: a .kilroy/config.yml with an unknown key
// fails a kilroy/config check with an annotation on that key's line.
func TestServeE2EInvalidConfig(t *testing.T) {
	e := newE2E(t, e2eOptions{})
	cfg := "version: 1\npipelines:\n  ci:\n    graph: .kilroy/ci.dot\n    comand: true\n"
	sha := e.repo.Commit(t, "feature-8", map[string]string{".kilroy/config.yml": cfg}, "configure")
	e.deliver("pull_request", e.openPR("opened", pr{number: 8, sha: sha, files: []string{".kilroy/config.yml"}}))
	e.assertConfigCheck(sha, ".kilroy/config.yml", 5)
}

func (e *e2e) assertConfigCheck(sha, path string, line int) {
	e.t.Helper()
	runs := e.waitSettled(sha, "kilroy/config")
	e.waitIdle()
	if len(runs) != 1 {
		e.t.Fatalf("check runs on the head:\n%s\nwant only kilroy/config", e.describeChecks())
	}
	r := runs[0]
	if r.Conclusion != "failure" {
		e.t.Errorf("kilroy/config: %s, want failure", r.Conclusion)
	}
	found := false
	for _, a := range r.Annotations {
		found = found || (a.Path == path && a.StartLine == line && a.AnnotationLevel == "failure")
	}
	if !found {
		e.t.Errorf("kilroy/config annotations %+v, want a failure on %s:%d\nsummary:\n%s", r.Annotations, path, line, r.Summary)
	}
}

// TestServeE2EManyAnnotations: a verify node with 120 findings gets all
// 120 annotations on its check, sent 50 per request.
func TestServeE2EManyAnnotations(t *testing.T) {
	var lines strings.Builder
	for i := 1; i <= 120; i++ {
		fmt.Fprintf(&lines, "lib.go:%d:1: finding %d\\n", i, i)
	}
	lib := strings.Repeat("// line\n", 130)
	vet := fmt.Sprintf("printf '%s'; exit 1", lines.String())
	e := newE2E(t, e2eOptions{files: map[string]string{"main.go": mainGo, "lib.go": lib, ".kilroy/ci.dot": ciDOT(vet)}})
	sha := e.repo.Commit(t, "feature-9", map[string]string{"README.md": "change\n"}, "change")
	e.deliver("pull_request", e.openPR("opened", pr{number: 9, sha: sha}))
	e.waitSettled(sha, "kilroy/ci/vet")
	e.waitIdle()
	v := e.named(sha, "kilroy/ci/vet")[0]
	if len(v.Annotations) != 120 {
		t.Fatalf("kilroy/ci/vet has %d annotations, want 120", len(v.Annotations))
	}
	seen := map[int]bool{}
	for _, a := range v.Annotations {
		if a.Path == "lib.go" {
			seen[a.StartLine] = true
		}
	}
	if len(seen) != 120 {
		t.Errorf("annotations cover %d distinct lines of lib.go, want 120", len(seen))
	}
	if len(v.Requests) < 3 {
		t.Errorf("%d requests carried the annotations, want at least 3 (50 per request)", len(v.Requests))
	}
}

// TestServeE2ENoSecretLeak: a node that prints its environment, in a
// server whose own environment holds the webhook secret and tokens, leaks
// none of them: not to GitHub (every request the fake received), not to
// the run directory, not to the logs.
func TestServeE2ENoSecretLeak(t *testing.T) {
	e := newE2E(t, e2eOptions{files: map[string]string{"main.go": mainGo, ".kilroy/ci.dot": ciDOT("env; cat $HOME/.gitconfig 2>/dev/null; exit 1")}})
	planted := "ghs_" + strings.Repeat("Z", 36)
	t.Setenv("KILROY_WEBHOOK_SECRET", string(e.secret))
	t.Setenv("GITHUB_TOKEN", planted)
	t.Setenv("KILROY_PRIVATE_KEY_FILE", "/nonexistent/key.pem")
	e.restart() // serve reads its environment when it starts
	sha := e.repo.Commit(t, "feature-10", map[string]string{"README.md": "change\n"}, "change")
	e.deliver("pull_request", e.openPR("opened", pr{number: 10, sha: sha}))
	e.waitSettled(sha, "kilroy/ci", "kilroy/ci/vet")
	e.waitIdle()

	secrets := map[string]string{"webhook secret": string(e.secret), "planted token": planted}
	key := strings.TrimSpace(string(e.gh.PrivateKeyPEM()))
	secrets["App key"] = strings.Split(key, "\n")[1] // a line of the key material
	for i, tok := range e.gh.Tokens() {
		secrets[fmt.Sprintf("installation token %d", i)] = tok.Value()
	}
	var where []string
	check := func(place, text string) {
		for name, s := range secrets {
			if strings.Contains(text, s) {
				where = append(where, name+" in "+place)
			}
		}
	}
	for _, r := range e.gh.Requests() {
		check(r.Method+" "+r.Path, r.Body)
	}
	err := filepath.WalkDir(e.cfg.DataDir, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		check(path, string(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	check("the logs", e.logs.String())
	if len(where) > 0 {
		t.Errorf("secrets leaked:\n%s", strings.Join(where, "\n"))
	}
	// The node did print its environment: the test would mean nothing if
	// it had not run.
	out, err := os.ReadFile(filepath.Join(e.cfg.DataDir, "runs", runID(e.named(sha, "kilroy/ci")[0]), "nodes", "vet", "stdout.log"))
	if err != nil || !strings.Contains(string(out), "PATH=") {
		t.Errorf("vet's output (%v) does not hold its environment:\n%s", err, out)
	}
}

// TestServeE2EGitHubFaults: 502s and a secondary rate limit on check-run
// calls delay the checks but every one still completes with its result.
func TestServeE2EGitHubFaults(t *testing.T) {
	e := newE2E(t, e2eOptions{})
	e.gh.FailNext("POST", "/api/v3/repos/octo/widgets/check-runs", 2, http.StatusBadGateway, nil)
	e.gh.FailNext("PATCH", "/api/v3/repos/octo/widgets/check-runs/*", 2, http.StatusBadGateway, nil)
	e.gh.FailNext("PATCH", "/api/v3/repos/octo/widgets/check-runs/*", 1, http.StatusForbidden, map[string]string{"Retry-After": "1"})
	sha := e.repo.Commit(t, "feature-11", map[string]string{"README.md": "change\n"}, "change")
	e.deliver("pull_request", e.openPR("opened", pr{number: 11, sha: sha}))
	e.waitSettled(sha, "kilroy/ci", "kilroy/ci/vet")
	e.waitIdle()
	if n := len(e.checkRuns(sha)); n != 2 {
		t.Errorf("%d check runs, want 2 (no duplicate from a retried create):\n%s", n, e.describeChecks())
	}
	vet := e.named(sha, "kilroy/ci/vet")[0]
	if vet.Conclusion != "failure" || len(vet.Annotations) != 1 {
		t.Errorf("kilroy/ci/vet: %s with %d annotations, want failure with 1", vet.Conclusion, len(vet.Annotations))
	}
	var faults []int
	for _, r := range e.gh.Requests() {
		if strings.Contains(r.Path, "/check-runs") && r.Status >= 400 {
			faults = append(faults, r.Status)
		}
	}
	if len(faults) != 5 {
		t.Errorf("check-run calls failed with %v, want the 5 injected faults", faults)
	}
}

// TestServeE2EShutdownResume: serve shuts down while a run is in its vet
// node; the run is handed back, and the next start on the same data dir
// resumes it from its checkpoint and completes its checks (adopted, not
// made again). No check is left queued or in progress.
func TestServeE2EShutdownResume(t *testing.T) {
	gate := newGate(t)
	e := newE2E(t, e2eOptions{files: map[string]string{"main.go": mainGo, ".kilroy/ci.dot": ciDOT(gatedVet(gate))}})
	e.cfg.RunDrain = 200 * time.Millisecond
	e.restart()
	sha := e.repo.Commit(t, "feature-12", map[string]string{"README.md": "change\n"}, "change")
	e.deliver("pull_request", e.openPR("opened", pr{number: 12, sha: sha}))
	id := e.waitNode(sha, "vet")

	e.stop()
	if allCompleted(e.checkRuns(sha)) {
		t.Fatalf("every check completed although the run was cut short:\n%s", e.describeChecks())
	}
	touch(t, gate)
	e.start()
	runs := e.waitSettled(sha, "kilroy/ci", "kilroy/ci/vet")
	e.waitIdle()
	if len(runs) != 2 {
		t.Fatalf("check runs after the restart:\n%s\nwant the two of the first start", e.describeChecks())
	}
	for _, r := range runs {
		if r.Conclusion != "failure" || !strings.HasPrefix(r.ExternalID, id) {
			t.Errorf("%s (%s): %s, want failure of run %s", r.Name, r.ExternalID, r.Conclusion, id)
		}
	}
	// Resumed, not started over: start and build ran once.
	log := e.repo.Git(t, "log", "--format=%s", sha+"..kilroy/run/ci/"+id)
	if strings.Count(log, "build (success)") != 1 || !strings.Contains(log, "vet (fail)") {
		t.Errorf("run branch after the resume:\n%s\nwant build once and vet", log)
	}
	e.assertAllCompleted()
}
