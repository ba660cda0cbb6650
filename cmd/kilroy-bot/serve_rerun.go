package main

import (
	"context"

	appserver "github.com/kilroy-bot/kilroy-bot/server"
)

var _ appserver.CheckLister = (*githubAPI)(nil)

// CheckRuns lists the check runs on sha, the newest of each name, for
// `/kilroy run --from-failure` to find the failed runs.
func (a *githubAPI) CheckRuns(ctx context.Context, repo appserver.Repo, sha string) ([]appserver.CheckRunState, error) {
	runs, err := a.c.ListCheckRunsForRef(ctx, ghRepo(repo), sha, "")
	if err != nil {
		return nil, err
	}
	out := make([]appserver.CheckRunState, len(runs))
	for i, r := range runs {
		out[i] = appserver.CheckRunState{Name: r.Name, ExternalID: r.ExternalID, Status: r.Status, Conclusion: r.Conclusion}
	}
	return out, nil
}
