package appsrv

import (
	"context"
	"time"

	"github.com/kilroy-bot/kilroy-bot/ghapp"
	"github.com/kilroy-bot/kilroy-bot/server"
)

// GitHub is server.GitHub over one installation's client.
type GitHub struct{ C *ghapp.Client }

var _ server.GitHub = GitHub{}

func ghRepo(r server.Repo) ghapp.Repo { return ghapp.Repo{Owner: r.Owner, Name: r.Name} }

func (g GitHub) PullRequest(ctx context.Context, repo server.Repo, n int) (server.PullRequest, error) {
	pr, err := g.C.PullRequest(ctx, ghRepo(repo), n)
	if err != nil {
		return server.PullRequest{}, err
	}
	return server.PullRequest{Number: pr.Number, State: pr.State, HeadSHA: pr.HeadSHA, HeadRepoFullName: pr.HeadRepo,
		BaseRef: pr.BaseRef, Draft: pr.Draft, Fork: pr.FromFork(), AuthorLogin: pr.Author}, nil
}

func (g GitHub) PullRequestFiles(ctx context.Context, repo server.Repo, n int) ([]string, error) {
	return g.C.PullRequestFiles(ctx, ghRepo(repo), n)
}

func (g GitHub) CollaboratorPermission(ctx context.Context, repo server.Repo, user string) (string, error) {
	return g.C.CollaboratorPermission(ctx, ghRepo(repo), user)
}

func (g GitHub) CreateComment(ctx context.Context, repo server.Repo, n int, body string) error {
	_, err := g.C.CreateComment(ctx, ghRepo(repo), n, body)
	return err
}

func (g GitHub) AddReaction(ctx context.Context, repo server.Repo, id int64, content string) error {
	return g.C.AddReaction(ctx, ghRepo(repo), id, content)
}

func (g GitHub) ConfigCheck(ctx context.Context, repo server.Repo, c server.ConfigCheck) error {
	anns := make([]ghapp.Annotation, len(c.Annotations))
	for i, an := range c.Annotations {
		anns[i] = ghapp.Annotation{Path: an.Path, StartLine: an.Line, EndLine: an.Line, Level: "failure", Message: an.Message}
	}
	_, err := g.C.CreateCheckRun(ctx, ghRepo(repo), ghapp.CheckRunCreate{
		Name: server.ConfigCheckName, HeadSHA: c.HeadSHA, Status: "completed", Conclusion: "failure",
		CompletedAt: time.Now(), ExternalID: "config/" + c.HeadSHA,
		Output: &ghapp.CheckRunOutput{Title: c.Title, Summary: c.Summary, Annotations: anns},
	})
	return err
}
