package ghapp

import (
	"bytes"
	"context"
	"io"
	"math"
	"net/http"
	"strconv"
	"time"
)

const onceKey ctxKey = repeatableKey + 1

// Once marks requests made with ctx as worth one attempt only: for a
// write that the next one supersedes, such as a check run's progress,
// which must not wait out a rate limit or a retry and then go out stale
// and late. The transport sends it once; a rate limit, in force or
// answered, comes back at once as a *RateLimitedError saying how long to
// wait, and a failure as the error it is. Either way the caller sends
// its latest state later, instead of this one.
func Once(ctx context.Context) context.Context {
	return context.WithValue(ctx, onceKey, true)
}

func once(req *http.Request) bool { return req.Context().Value(onceKey) != nil }

// pausedResponse is the answer to a request sent Once while the
// installation sits out a rate limit until until: what GitHub would say,
// a secondary limit with its Retry-After, without asking GitHub.
func pausedResponse(req *http.Request, until, now time.Time) *http.Response {
	secs := int(math.Ceil(until.Sub(now).Seconds()))
	body := `{"message":"You have exceeded a secondary rate limit (kilroy-bot waits it out before sending this).",` +
		`"documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`
	h := http.Header{}
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Retry-After", strconv.Itoa(max(secs, 1)))
	return &http.Response{
		Status: "429 Too Many Requests", StatusCode: http.StatusTooManyRequests, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(bytes.NewReader([]byte(body))), ContentLength: int64(len(body)), Request: req,
	}
}
