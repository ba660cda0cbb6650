// Package ghapp is how kilroy-bot talks to GitHub: as the App, as one of its
// installations, and with short-lived tokens scoped to one repository.
//
// The model:
//
//   - An App holds the App's identity (id and private key) and signs a JWT
//     for every App-level call (ghinstallation.AppsTransport). It is built
//     once by the composition root and shared by everything.
//   - App.Installation gives a Client for one installation, made per event.
//     The Client authenticates with an installation token that the App
//     caches per installation and renews before it expires, so many
//     short-lived Clients do not mint many tokens. Credentials are attached
//     only to requests for the configured API host.
//   - Client methods are the narrow API the rest of the bot uses (check runs,
//     pull requests, permissions, contents, comments, reactions). They take
//     and return this package's own small structs, never go-github types, so
//     callers define their interfaces over them without importing go-github.
//   - App.RepoToken mints a token narrowed to one repository and a few
//     permissions for git; RepoTokens hands such tokens to git as a
//     TokenSource for the length of one run and revokes them when it ends.
//
// Robustness lives in one http.RoundTripper below go-github:
//
//   - 5xx answers and connection errors are retried with exponential backoff
//     and jitter, a bounded number of times, while the context allows.
//     POST requests are not retried this way unless the operation is known
//     to be safe to repeat (reactions, token creation): a 502 may arrive
//     after GitHub made the object. CreateCheckRun instead looks the run up
//     by its external_id after an ambiguous failure and retries only when
//     it finds none.
//   - Rate limits (primary: x-ratelimit-remaining 0 until x-ratelimit-reset;
//     secondary: 403/429 with Retry-After or GitHub's secondary-rate-limit
//     message) are waited out, for every method, since GitHub refused the
//     request without acting on it. The wait pauses the whole installation,
//     because the limit is the installation's. A wait longer than
//     Options.MaxWait is not sat out: the call fails at once with a
//     *RateLimitedError carrying the wait, for the caller to reschedule.
//   - Writes (POST, PATCH, PUT, DELETE) of one installation are serialised
//     by a lock the App holds per installation, as GitHub asks of
//     content-creating requests; reads run concurrently. Token requests
//     (minting as the App, revoking with the token itself) create no
//     content and are not serialised.
//
// Errors carry the operation and repository and match ErrNotFound,
// ErrForbidden, ErrUnauthorized, ErrUninstalled or *RateLimitedError.
// Token values never appear in errors or logs: Token formats itself
// redacted, and nothing here logs headers or request bodies.
package ghapp
