package ghapptest

import (
	"net/http"
)

// apiPrefix is where GitHub Enterprise serves REST.
const apiPrefix = "/api/v3"

// routes builds the server's handler: REST below apiPrefix, git smart HTTP
// and the App manifest pages everywhere else. Two muxes keep GitHub's paths
// readable here and avoid patterns like "/{owner}/{repo}/info/refs" overlapping REST ones.
func (s *Server) routes() http.Handler {
	rest := http.NewServeMux()
	for pattern, h := range map[string]apiHandler{
		"POST /app/installations/{id}/access_tokens":                s.createToken,
		"GET /app/installations/{id}":                               s.getInstallation,
		"GET /app/installations":                                    s.listInstallations,
		"GET /app/hook/deliveries":                                  s.listHookDeliveries,
		"POST /app/hook/deliveries/{id}/attempts":                   s.redeliver,
		"POST /app-manifests/{code}/conversions":                    s.convertManifest,
		"DELETE /installation/token":                                s.revokeToken,
		"GET /repos/{owner}/{repo}":                                 s.getRepo,
		"GET /repos/{owner}/{repo}/installation":                    s.getRepoInstallation,
		"POST /repos/{owner}/{repo}/check-runs":                     s.createCheckRun,
		"GET /repos/{owner}/{repo}/check-runs/{id}":                 s.getCheckRun,
		"PATCH /repos/{owner}/{repo}/check-runs/{id}":               s.updateCheckRun,
		"GET /repos/{owner}/{repo}/check-runs/{id}/annotations":     s.listAnnotations,
		"GET /repos/{owner}/{repo}/commits/{ref}/check-runs":        s.listCheckRunsForRef,
		"GET /repos/{owner}/{repo}/commits/{sha}/pulls":             s.listPullsForCommit,
		"GET /repos/{owner}/{repo}/collaborators/{user}/permission": s.getPermission,
		"POST /repos/{owner}/{repo}/issues/{number}/comments":       s.createComment,
		"POST /repos/{owner}/{repo}/issues/comments/{id}/reactions": s.createReaction,
		"GET /repos/{owner}/{repo}/pulls/{number}":                  s.getPull,
		"GET /repos/{owner}/{repo}/pulls/{number}/files":            s.listPullFiles,
		"GET /repos/{owner}/{repo}/contents/{path...}":              s.getContents,
		"/": func(http.ResponseWriter, *http.Request) error { return errNotFound() },
	} {
		rest.Handle(pattern, s.api(h))
	}
	git := http.NewServeMux()
	git.Handle("GET /{owner}/{repo}/info/refs", s.gitServe)
	git.Handle("POST /{owner}/{repo}/git-upload-pack", s.gitServe)
	git.Handle("POST /{owner}/{repo}/git-receive-pack", s.gitServe)
	// The browser's side of the App manifest flow.
	git.HandleFunc("POST /settings/apps/new", s.newAppFromManifest)
	git.HandleFunc("POST /organizations/{org}/settings/apps/new", s.newAppFromManifest)

	api := http.StripPrefix(apiPrefix, rest)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isAPIPath(r.URL.Path) {
			api.ServeHTTP(w, r)
			return
		}
		git.ServeHTTP(w, r)
	})
}
