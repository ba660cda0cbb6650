package runs

import (
	"context"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
	"github.com/kilroy-bot/kilroy-bot/ghserver"
	"github.com/kilroy-bot/kilroy-bot/queue"
	"github.com/kilroy-bot/kilroy-bot/server"
)

// TestReplicaRunsServeAdapter holds the benchmark to serve's GitHub code:
// the GitHub and the check reporters its replicas run with are ghserver's
// types, the ones serve wires (cmd/kilroy-bot's TestServeWiresGhserver),
// not a copy of them, and what they post is redacted as serve's is.
func TestReplicaRunsServeAdapter(t *testing.T) {
	ctx := context.Background()
	gh := ghapptest.New(t)
	repo := gh.AddRepo("acme", "api")
	sha := repo.Commit(t, "main", map[string]string{".kilroy/ci.dot": onePipeline}, "initial")
	gh.PutPull("acme", "api", ghapptest.Pull{Number: 1, HeadSHA: sha, Author: author})
	dir := t.TempDir()
	q, err := queue.Open(ctx, queue.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Close() })
	opts := serverOptions(t, gh, newApp(t, gh), dir, q)
	id := gh.InstallationID("acme")

	api, err := opts.GitHub(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := api.(*ghserver.GitHub); !ok {
		t.Fatalf("the replicas' GitHub is a %T, want serve's *ghserver.GitHub", api)
	}
	rep, err := opts.NewReporter(ctx, server.ReportTarget{InstallationID: id, Repo: "acme/api",
		Pipeline: "ci", RunID: "run-1", HeadSHA: sha})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rep.(*ghserver.Reporter); !ok {
		t.Fatalf("the replicas' check reporter is a %T, want serve's *ghserver.Reporter", rep)
	}

	r := server.Repo{Owner: "acme", Name: "api", FullName: "acme/api"}
	if err := api.CreateComment(ctx, r, 1, "failed near "+webhookSecret+" in "+dir+"/runs/run-1"); err != nil {
		t.Fatal(err)
	}
	comments := gh.Comments("acme", "api")
	if len(comments) != 1 {
		t.Fatalf("%d comments on the fake GitHub, want 1", len(comments))
	}
	if body := comments[0].Body; strings.Contains(body, webhookSecret) || strings.Contains(body, dir) {
		t.Errorf("the comment posted shows the webhook secret or the data dir: %q", body)
	}
}
