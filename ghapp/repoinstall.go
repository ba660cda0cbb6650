package ghapp

import "context"

// RepoInstallation returns the id of the installation of the App that
// reaches repo (GET /repos/{owner}/{repo}/installation, as the App). A
// repository the App is not installed on is ErrUninstalled.
func (a *App) RepoInstallation(ctx context.Context, repo Repo) (int64, error) {
	in, _, err := a.api.Apps.GetRepositoryInstallation(ctx, repo.Owner, repo.Name)
	if err != nil {
		return 0, a.apiError("find the installation of the repository", repo, err, ErrUninstalled)
	}
	return in.GetID(), nil
}
