package agent

import (
	"regexp"
	"strings"
)

// redacted replaces every secret in text the agent writes to logs, the
// transcript or a failure reason (which ends up on GitHub).
const redacted = "[REDACTED]"

// tokenShapes are credentials recognisable by their form, redacted even
// when they are not among the bot's known secret values (a key echoed
// back by a proxy, a token the model hallucinated from a real one).
var tokenShapes = regexp.MustCompile(`sk-ant-[A-Za-z0-9_\-]{6,}|sk-[A-Za-z0-9_\-]{12,}|` +
	`gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{16,}|AIza[0-9A-Za-z_\-]{20,}|` +
	`(?i:bearer\s+)[A-Za-z0-9._~+/\-]{12,}=*`)

// minRedactLen is the shortest secret value replaced inside text; shorter
// ones would match ordinary words.
const minRedactLen = 8

// redact returns s with the given secret values and token shapes replaced.
func redact(s string, secrets []string) string {
	for _, v := range secrets {
		if len(v) >= minRedactLen {
			s = strings.ReplaceAll(s, v, redacted)
		}
	}
	return tokenShapes.ReplaceAllStringFunc(s, func(m string) string {
		if len(m) > 7 && strings.EqualFold(m[:7], "bearer ") {
			return m[:7] + redacted
		}
		return redacted
	})
}
