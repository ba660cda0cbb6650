// Package redeliver recovers webhook deliveries the bot missed.
//
// GitHub does not deliver a webhook again by itself: a delivery the bot
// answered with a 5xx (its database was unavailable, its body budget was
// full), or that never reached it (the bot was down, restarting or crashed
// mid-request), is lost unless someone asks for it again. The Recoverer
// does, at start and then periodically:
//
//   - it lists the App's delivery attempts of the last Window (GitHub keeps
//     them for three days) through GET /app/hook/deliveries;
//   - it groups them by GUID (X-GitHub-Delivery; a redelivery is another
//     attempt with the same GUID): a GUID with any attempt the bot answered
//     below 500 was received, so only GUIDs whose every attempt failed (5xx,
//     or status 0: not delivered) are candidates;
//   - it drops the candidates the queue has recorded (the webhook's dedupe
//     table: a delivery may be committed and still be answered 5xx when the
//     connection broke), those it asked for itself within the last minute
//     (the redelivery may not be listed yet) and those that failed
//     MaxAttempts times (something other than an outage is wrong; the log
//     says which);
//   - it asks GitHub to redeliver the newest attempt of each of the rest
//     (POST /app/hook/deliveries/{id}/attempts).
//
// Replicas sharing a Postgres queue each run it; a delivery two of them
// redeliver is received twice and deduplicated like any redelivery.
package redeliver
