package webhook

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
)

// Log keys, named once.
const (
	keyDelivery     = "delivery"
	keyEvent        = "event"
	keyAction       = "action"
	keyInstallation = "installation"
	keyRepo         = "repo"
	keyPR           = "pr"
	keyKind         = "kind"
	keyStatus       = "status"
	keyReason       = "reason"
	keyJob          = "job"
	keyError        = "error"
)

// record is what one delivery's log line reports beyond its headers.
type record struct {
	event *Event // set once the payload is decoded and accepted for the sink
}

// reply is the JSON body of every answer.
type reply struct {
	Delivery string `json:"delivery,omitempty"`
	Status   string `json:"status"`
	Kind     Kind   `json:"kind,omitempty"`
	Job      string `json:"job,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Error    string `json:"error,omitempty"`
}

// ServeHTTP is the adapter around handle: the one place that turns its
// result or error into a status, a body and a log line.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var rec record
	out, err := h.handle(w, r, &rec)
	rep := reply{Delivery: r.Header.Get(headerDelivery), Status: out.status, Job: out.job, Reason: out.reason}
	if rec.event != nil {
		rep.Kind = rec.event.Kind
	}
	code := out.code
	if err != nil {
		code, rep.Error = statusOf(err)
		rep.Status = "error"
	}
	writeJSON(w, code, rep)
	h.log(r, code, rep, rec, err)
}

func writeJSON(w http.ResponseWriter, code int, rep reply) {
	body, _ := json.Marshal(rep) // a struct of strings always marshals
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(append(body, '\n'))
}

// log writes the delivery's line: ignored deliveries at debug, refusals at
// warn, failures to store at warn when the queue said it was unavailable and
// at error otherwise.
func (h *Handler) log(r *http.Request, code int, rep reply, rec record, err error) {
	attrs := []slog.Attr{
		slog.String(keyDelivery, rep.Delivery),
		slog.String(keyEvent, r.Header.Get(headerEvent)),
		slog.Int(keyStatus, code),
	}
	if ev := rec.event; ev != nil {
		attrs = append(attrs, eventAttrs(ev)...)
	}
	for _, kv := range [][2]string{{keyReason, rep.Reason}, {keyJob, rep.Job}} {
		if kv[1] != "" {
			attrs = append(attrs, slog.String(kv[0], kv[1]))
		}
	}
	level := slog.LevelInfo
	switch {
	case err != nil:
		attrs = append(attrs, slog.String(keyError, err.Error()))
		level = errorLevel(code, err)
	case rep.Status == "ignored":
		level = slog.LevelDebug
	}
	h.cfg.Logger.LogAttrs(r.Context(), level, "webhook delivery", attrs...)
}

func eventAttrs(ev *Event) []slog.Attr {
	attrs := []slog.Attr{slog.String(keyKind, string(ev.Kind))}
	if ev.Action != "" {
		attrs = append(attrs, slog.String(keyAction, ev.Action))
	}
	if ev.InstallationID != 0 {
		attrs = append(attrs, slog.Int64(keyInstallation, ev.InstallationID))
	}
	if ev.Repo.FullName != "" {
		attrs = append(attrs, slog.String(keyRepo, ev.Repo.FullName))
	}
	if ev.PR.Number != 0 {
		attrs = append(attrs, slog.Int(keyPR, ev.PR.Number))
	}
	return attrs
}

func errorLevel(code int, err error) slog.Level {
	switch {
	case code < http.StatusInternalServerError:
		return slog.LevelWarn
	case errors.Is(err, ErrUnavailable):
		return slog.LevelWarn
	default:
		return slog.LevelError
	}
}
