package agent

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// apiErrorMessage extracts the human message of an API error body
// ({"error":{"message":…}} for both protocols), falling back to the body
// itself, shortened, then to the status text.
func apiErrorMessage(body string, status int) string {
	var env struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		} `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal([]byte(body), &env) == nil {
		if m := or(env.Error.Message, env.Message); m != "" {
			if env.Error.Type != "" {
				return env.Error.Type + ": " + m
			}
			return m
		}
	}
	if b := strings.TrimSpace(body); b != "" {
		if len(b) > 500 {
			b = b[:500] + "…"
		}
		return b
	}
	return http.StatusText(status)
}

// retryAfter reads retry-after-ms or retry-after (seconds); an HTTP date
// is ignored and the backoff applies.
func retryAfter(h http.Header) time.Duration {
	if v, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && v > 0 {
		return time.Duration(v * float64(time.Millisecond))
	}
	if v, err := strconv.ParseFloat(h.Get("Retry-After"), 64); err == nil && v > 0 {
		return time.Duration(v * float64(time.Second))
	}
	return 0
}
