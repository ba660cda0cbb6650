package checks

import (
	"cmp"
	"regexp"
	"slices"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/secrets"
)

// Redacted replaces every secret the Redactor finds.
const Redacted = "[REDACTED]"

// MinSecretLen is the shortest exact value a Redactor replaces: shorter
// values are as likely to be ordinary words as secrets, and replacing
// every "password" in a log helps no one.
const MinSecretLen = 8

// tokenShape is one form of credential. Each pattern starts with a
// literal, which lets the regexp engine skip to candidates instead of
// trying every byte; the word-boundary checks are done by hand for the
// same reason.
type tokenShape struct {
	re *regexp.Regexp
	// boundary: the match must not touch a letter, digit or underscore on
	// the left (and, for fixed-length shapes, on the right), so that
	// "task-…" is not an "sk-" key.
	left, right bool
}

// tokenShapes match credentials by their form, whoever they belong to:
// GitHub tokens (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_), Anthropic
// (sk-ant-) and OpenAI (sk-, sk-proj-) keys, AWS access key IDs, JWTs (an
// App's JWT among them) and PEM private keys. A PEM block whose END line
// was cut off is redacted to the end of the text, since the rest of the
// key may follow.
var tokenShapes = []tokenShape{
	{re: regexp.MustCompile(`gh[opusr]_[A-Za-z0-9]{20,}`), left: true},
	{re: regexp.MustCompile(`github_pat_[A-Za-z0-9_]{20,}`), left: true},
	{re: regexp.MustCompile(`sk-[A-Za-z0-9_-]{20,}`), left: true},
	{re: regexp.MustCompile(`AKIA[0-9A-Z]{16}`), left: true, right: true},
	{re: regexp.MustCompile(`ASIA[0-9A-Z]{16}`), left: true, right: true},
	{re: regexp.MustCompile(`eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*`), left: true},
	// base64("x-access-token:…"), the Basic credential git sends.
	{re: regexp.MustCompile(`eC1hY2Nlc3MtdG9rZW46[A-Za-z0-9+/=]{8,}`), left: true},
	// Any credential in an Authorization header, whatever its form.
	{re: regexp.MustCompile(`(?i)authorization:\s*(?:basic|bearer|token)\s+[A-Za-z0-9+/=._~-]{8,}`)},
	{re: regexp.MustCompile(`-----BEGIN[ A-Z0-9]*PRIVATE KEY-----(?s:.*?)(?:-----END[ A-Z0-9]*PRIVATE KEY-----|\z)`)},
}

// redactShapes replaces every token-shaped span of s.
func redactShapes(s string) string {
	var spans [][2]int
	for _, sh := range tokenShapes {
		for _, m := range sh.re.FindAllStringIndex(s, -1) {
			if (sh.left && m[0] > 0 && isWordByte(s[m[0]-1])) || (sh.right && m[1] < len(s) && isWordByte(s[m[1]])) {
				continue
			}
			spans = append(spans, [2]int{m[0], m[1]})
		}
	}
	if len(spans) == 0 {
		return s
	}
	slices.SortFunc(spans, func(a, b [2]int) int { return cmp.Compare(a[0], b[0]) })
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		if sp[1] <= last {
			continue // inside a span already replaced
		}
		if sp[0] >= last {
			b.WriteString(s[last:sp[0]])
			b.WriteString(Redacted)
		}
		last = sp[1] // an overlapping span extends the one before
	}
	b.WriteString(s[last:])
	return b.String()
}

func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// Redactor removes secrets from text before it leaves the process: the
// exact values it was given and anything shaped like a token. The zero
// value and nil redact token shapes only. A Redactor is immutable and safe
// for concurrent use.
//
// There is deliberately no streaming io.Writer: a secret split across two
// writes, or a PEM block spread over many, cannot be recognised without
// holding back unbounded output, so callers redact whole texts.
type Redactor struct {
	exact *strings.Replacer // nil without values
	paths *strings.Replacer // nil without paths (WithPaths)
}

// WithPaths returns a copy of r that also replaces each of paths (host
// directories such as the server's data dir, which git's and the
// engine's messages quote) with shown. Empty paths and "/" are ignored.
func (r *Redactor) WithPaths(shown string, paths ...string) *Redactor {
	out := &Redactor{}
	if r != nil {
		out.exact = r.exact
	}
	var ps []string
	for _, p := range paths {
		if p != "" && p != "/" && !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
	}
	if len(ps) == 0 {
		return out
	}
	slices.SortFunc(ps, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	pairs := make([]string, 0, 2*len(ps))
	for _, p := range ps {
		pairs = append(pairs, p, shown)
	}
	out.paths = strings.NewReplacer(pairs...)
	return out
}

// NewRedactor returns a Redactor for the given secret values (webhook
// secret, tokens, key material). Surrounding whitespace is ignored, as
// values read from files often end in a newline; a multi-line value is
// also redacted line by line, because logs re-wrap and quote PEM keys.
// Values shorter than MinSecretLen are ignored.
func NewRedactor(values ...string) *Redactor {
	var vals []string
	add := func(s string) {
		s = strings.TrimSpace(s)
		if len(s) >= MinSecretLen && !slices.Contains(vals, s) {
			vals = append(vals, s)
		}
	}
	for _, s := range values {
		add(s)
		for _, form := range secrets.Forms(strings.TrimSpace(s))[1:] {
			add(form)
		}
		if strings.Contains(strings.TrimSpace(s), "\n") {
			for line := range strings.SplitSeq(s, "\n") {
				add(line)
			}
		}
	}
	if len(vals) == 0 {
		return &Redactor{}
	}
	// strings.Replacer tries patterns in argument order at each position:
	// longest first, so a value containing another is replaced whole.
	slices.SortFunc(vals, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	pairs := make([]string, 0, 2*len(vals))
	for _, v := range vals {
		pairs = append(pairs, v, Redacted)
	}
	return &Redactor{exact: strings.NewReplacer(pairs...)}
}

// Redact returns s with every secret replaced by Redacted, cleaned of
// escape sequences and control characters first (Clean), so that none can
// split a secret or reach a reader.
func (r *Redactor) Redact(s string) string {
	s = Clean(s)
	if r != nil && r.paths != nil {
		s = r.paths.Replace(s)
	}
	if r != nil && r.exact != nil {
		s = r.exact.Replace(s)
	}
	return redactShapes(s)
}
