package ghserver

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kilroy-bot/kilroy-bot/ghapp"
	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
	"github.com/kilroy-bot/kilroy-bot/metrics"
	"github.com/kilroy-bot/kilroy-bot/server"
)

const secret = "s3cr3t-webhook-value"

// installation is the GitHub of acme's installation on the fake GitHub,
// with a commit on acme/api's main and pull request 1 at it.
func installation(t *testing.T) (gh *ghapptest.Server, api server.GitHub, dataDir, sha string) {
	t.Helper()
	gh = ghapptest.New(t)
	sha = gh.AddRepo("acme", "api").Commit(t, "main", map[string]string{"README.md": "x\n"}, "initial")
	gh.PutPull("acme", "api", ghapptest.Pull{Number: 1, HeadSHA: sha, Author: "alice"})
	app, err := ghapp.NewApp(ghapp.Options{AppID: gh.AppID(), PrivateKeyPEM: gh.PrivateKeyPEM(),
		BaseURL: gh.APIURL(), HTTPClient: gh.Client()})
	if err != nil {
		t.Fatal(err)
	}
	m, err := metrics.New(prometheus.NewRegistry(), metrics.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dataDir = t.TempDir()
	a, err := New(Options{App: app, Redactor: NewRedactor(dataDir, secret), Metrics: m, DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	api, err = a.GitHub(context.Background(), gh.InstallationID("acme"))
	if err != nil {
		t.Fatal(err)
	}
	return gh, api, dataDir, sha
}

var acmeAPI = server.Repo{Owner: "acme", Name: "api", FullName: "acme/api"}

func TestCreateCommentRedactsAndFits(t *testing.T) {
	gh, api, dataDir, _ := installation(t)
	body := "failed with " + secret + " in " + dataDir + "/runs/r1\n" + strings.Repeat("x", 2*maxCommentBody)
	if err := api.CreateComment(context.Background(), acmeAPI, 1, body); err != nil {
		t.Fatal(err)
	}
	comments := gh.Comments("acme", "api")
	if len(comments) != 1 {
		t.Fatalf("%d comments, want 1", len(comments))
	}
	got := comments[0].Body
	if len(got) > maxCommentBody {
		t.Errorf("comment of %d bytes, over GitHub's %d", len(got), maxCommentBody)
	}
	if strings.Contains(got, secret) || strings.Contains(got, dataDir) {
		t.Errorf("the comment shows the secret or the data dir: %.200q", got)
	}
	if !strings.Contains(got, server.DataDirShown) {
		t.Errorf("the comment does not show the data dir as %q: %.200q", server.DataDirShown, got)
	}
}

func TestConfigCheckAnnotatesPastFifty(t *testing.T) {
	gh, api, _, sha := installation(t)
	c := server.ConfigCheck{HeadSHA: sha, Title: "invalid config", Summary: "the key " + secret + " is unknown"}
	for i := range 60 {
		c.Annotations = append(c.Annotations, server.ConfigAnnotation{Path: ".kilroy/config.yml", Line: i + 1,
			Column: i % 2, Message: fmt.Sprintf("problem %d", i)})
	}
	if err := api.ConfigCheck(context.Background(), acmeAPI, c); err != nil {
		t.Fatal(err)
	}
	runs := gh.CheckRuns("acme", "api")
	if len(runs) != 1 {
		t.Fatalf("%d check runs, want 1", len(runs))
	}
	cr := runs[0]
	if cr.Name != server.ConfigCheckName || cr.Status != "completed" || cr.Conclusion != "failure" || cr.HeadSHA != sha {
		t.Errorf("check %s on %s: %s/%s; want %s on %s, completed/failure", cr.Name, cr.HeadSHA, cr.Status, cr.Conclusion,
			server.ConfigCheckName, sha)
	}
	if len(cr.Annotations) != 60 {
		t.Errorf("%d annotations, want all 60", len(cr.Annotations))
	}
	for _, an := range cr.Annotations {
		col := (an.StartLine - 1) % 2
		if an.AnnotationLevel != "failure" || an.StartColumn != col || an.EndColumn != col || an.Title != "invalid .kilroy/config.yml" {
			t.Errorf("annotation %+v: want level failure, column %d, title naming the file", an, col)
		}
	}
	if strings.Contains(cr.Summary, secret) {
		t.Errorf("the summary shows the secret: %q", cr.Summary)
	}
}
