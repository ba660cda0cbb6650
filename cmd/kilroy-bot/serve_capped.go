package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/ghapp"
	"github.com/kilroy-bot/kilroy-bot/queue"
)

// errNoQueuedCheck says a capped run's summary check is not there (yet):
// the queue asks again a second later.
var errNoQueuedCheck = errors.New("no queued summary check of the run yet")

// cappedNotice is the queue's Options.Capped: the summary check of a run
// held back by a cap of the server policy says why while it is queued.
// The run's own reporter replaces the text once the run starts. app is
// read when a run is capped, after wireServe has set it.
func cappedNotice(app **ghapp.App, redact func(string) string) func(ctx context.Context, c queue.CappedRun) error {
	return func(ctx context.Context, c queue.CappedRun) error {
		owner, name, ok := strings.Cut(c.Repo, "/")
		if !ok || *app == nil {
			return fmt.Errorf("capped run %s: repository %q or App missing", c.ID, c.Repo)
		}
		client, repo := (*app).Installation(ctx, c.InstallationID), ghapp.Repo{Owner: owner, Name: name}
		found, err := client.ListCheckRunsForRef(ctx, repo, c.HeadSHA, "kilroy/"+c.Pipeline)
		if err != nil {
			return err
		}
		for _, cr := range found {
			if cr.ExternalID != c.ID {
				continue
			}
			if cr.Status != "queued" {
				return nil // started meanwhile: its reporter has the check
			}
			return client.UpdateCheckRun(ctx, repo, cr.ID, ghapp.CheckRunUpdate{Output: &ghapp.CheckRunOutput{
				Title:   "Queued: waiting for a run of this repository or installation to end",
				Summary: redact(fmt.Sprintf("This run waits, queued: %s. It starts when one of them ends.", c.Reason)),
			}})
		}
		return errNoQueuedCheck
	}
}
