package main

import (
	"context"
	"log/slog"

	"github.com/kilroy-bot/kilroy-bot/ghapp"
)

// installationLister is what permissionHints needs of the App.
type installationLister interface {
	Installations(ctx context.Context) ([]ghapp.Installation, error)
}

// permissionHints logs, once at start, one line for each installation that
// does not grant the Merge queues permission: an App registered before
// kilroy-bot asked for it gets no merge_group events there, and a
// repository that requires a kilroy check in its merge queue would wait
// for it forever.
func permissionHints(app installationLister, logger *slog.Logger) func(context.Context) {
	return func(ctx context.Context) {
		ins, err := app.Installations(ctx)
		if err != nil {
			logger.Warn("serve: could not list the App's installations to check their permissions", "err", err)
			return
		}
		for _, in := range ins {
			if in.Permissions[ghapp.MergeQueuePermission] == "" {
				logger.Warn("serve: installation lacks the Merge queues permission (read): no merge_group events, "+
					"so a merge queue that requires a kilroy check never merges; add the permission and the Merge group "+
					"event in the App's settings and approve them on the installation (docs/serve.md §1)",
					"installation", in.ID, "account", in.Account)
			}
		}
	}
}
