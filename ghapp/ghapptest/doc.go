// Package ghapptest is a fake GitHub for tests: one httptest server that
// speaks enough of the REST API and of git smart HTTP for kilroy-bot to run
// end to end against it, as it would against a GitHub Enterprise host.
//
// The model is GitHub's, kept small:
//
//   - One GitHub App (an id and a freshly generated RSA key) is installed on
//     every owner that has a repository; each owner gets one installation.
//   - The App proves itself with an RS256 JWT and exchanges it for an
//     installation token ("ghs_…") that may be narrowed to some repositories
//     and permissions. Every other call, REST or git, must carry such a token
//     and is refused the way GitHub refuses it: 401 for a missing, unknown,
//     expired or revoked token, 404 for a repository outside the token's
//     scope, 403 for a permission the token lacks.
//   - Repositories are real bare git repositories in the test's temporary
//     directory, served through `git http-backend`, so clones, fetches and
//     pushes are real git. Tests seed them with Repo.Commit and inspect them
//     with Repo.Git.
//   - Pull requests, collaborator permissions and comments are plain records
//     the test sets up; check runs, comments and reactions the bot creates are
//     recorded for the test to assert on.
//   - Every check-run body is validated against the JSON Schemas in the shared
//     GitHub fixtures (../shared/testdata/github/rest/ beside the checkout).
//     An invalid body gets GitHub's 422 and also fails the test, so a bot that
//     would be rejected by GitHub cannot pass its tests here.
//   - The App manifest flow: a manifest posted to /settings/apps/new (or an
//     organisation's) is checked and answered with a redirect carrying a
//     code, which POST /app-manifests/{code}/conversions trades once for the
//     fake App's id, key and a fresh webhook secret.
//
// The URL layout is GitHub Enterprise's: REST under /api/v3/, git under
// /<owner>/<repo>.git/. Point a client at APIURL and clone from CloneURL.
//
// Faults (5xx, rate limits) can be injected per method and path, and every
// request is logged with its status for assertions. All state sits behind
// one mutex; git commands run outside it.
//
// This is test support: unlike product code it runs git itself, always with
// system and global git configuration switched off.
package ghapptest
