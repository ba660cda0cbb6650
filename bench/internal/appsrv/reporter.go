package appsrv

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/checks"
	"github.com/kilroy-bot/kilroy-bot/ghapp"
	"github.com/kilroy-bot/kilroy-bot/server"
)

// Reporters is server.ServerOptions.NewReporter over app: each run's
// checks published on the fake GitHub.
func Reporters(app *ghapp.App) func(ctx context.Context, t server.ReportTarget) (server.Reporter, error) {
	return func(ctx context.Context, t server.ReportTarget) (server.Reporter, error) {
		owner, name, ok := strings.Cut(t.Repo, "/")
		if !ok {
			return nil, fmt.Errorf("reporter: repository %q is not owner/name", t.Repo)
		}
		client, repo := app.Installation(ctx, t.InstallationID), ghapp.Repo{Owner: owner, Name: name}
		pub := checks.NewPublisher(client, repo, t.Graph,
			checks.RunInfo{Pipeline: t.Pipeline, RunID: t.RunID, HeadSHA: t.HeadSHA, Notes: t.Notes}, checks.PublishOptions{})
		return &reporter{Publisher: pub}, nil
	}
}

// reporter adapts a Publisher to server.Reporter as serve's does: Queued
// hands the checks it created to the run's reporter, and every ending
// completes them and stops the background sending.
type reporter struct{ *checks.Publisher }

func (r *reporter) Queued(ctx context.Context) error {
	return errors.Join(r.Publisher.Queued(ctx), r.Publisher.Release(ctx))
}

func (r *reporter) ActionRequired(ctx context.Context, title, summary string) error {
	return errors.Join(r.Publisher.ActionRequired(ctx, title, summary), r.Publisher.Close(ctx))
}

func (r *reporter) Cancel(ctx context.Context, reason string) error {
	return errors.Join(r.Publisher.Cancel(ctx, reason), r.Publisher.Close(ctx))
}

func (r *reporter) Fail(ctx context.Context, reason string) error {
	return errors.Join(r.Publisher.Fail(ctx, reason), r.Publisher.Close(ctx))
}
