package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/kilroy-bot/kilroy-bot/checks"
	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
)

// newServeLogger is serve's logger: JSON lines on w, every message and
// value passed through the redactor of cfg's secrets and of token shapes,
// so that an error quoting a URL with a token, or a node's output, cannot
// put a credential in the log.
func newServeLogger(w io.Writer, cfg serveConfig) *slog.Logger {
	red := checks.NewRedactor(append([]string{string(cfg.WebhookSecret), string(cfg.PrivateKey), string(cfg.DatabaseURL)},
		sandbox.HostSecrets(sandbox.HostEnv())...)...)
	return slog.New(redactingHandler{next: slog.NewJSONHandler(w, nil), red: red})
}

// redactingHandler redacts a record's message and values before the next
// handler formats them.
type redactingHandler struct {
	next slog.Handler
	red  *checks.Redactor
}

func (h redactingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

func (h redactingHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.red.Redact(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h redactingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		clean[i] = h.attr(a)
	}
	return redactingHandler{next: h.next.WithAttrs(clean), red: h.red}
}

func (h redactingHandler) WithGroup(name string) slog.Handler {
	return redactingHandler{next: h.next.WithGroup(name), red: h.red}
}

// attr redacts one value. Values of other kinds than strings and groups
// (errors, Stringers, structs) are formatted first: their text is what
// the log would show.
func (h redactingHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.red.Redact(v.String()))
	case slog.KindGroup:
		group := v.Group()
		clean := make([]any, len(group))
		for i, g := range group {
			clean[i] = h.attr(g)
		}
		return slog.Group(a.Key, clean...)
	case slog.KindAny:
		return slog.String(a.Key, h.red.Redact(fmt.Sprint(v.Any())))
	}
	return slog.Attr{Key: a.Key, Value: v}
}
