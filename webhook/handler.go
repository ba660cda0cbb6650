package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/http"
)

// Headers of a delivery, besides the signature.
const (
	headerEvent    = "X-GitHub-Event"
	headerDelivery = "X-GitHub-Delivery"
	headerHookID   = "X-GitHub-Hook-ID"
)

// Handler serves GitHub webhook deliveries. It is safe for concurrent use.
type Handler struct {
	cfg    Config
	sink   Sink
	budget *budget
	bodies bodyPool
}

// New returns a Handler that verifies deliveries with cfg.Secrets and hands
// what they ask for to sink. It fails without a usable secret.
func New(cfg Config, sink Sink) (*Handler, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if sink == nil {
		return nil, errors.New("webhook: nil sink")
	}
	return &Handler{cfg: cfg, sink: sink, budget: &budget{limit: cfg.BodyBudget}}, nil
}

// outcome is a delivery the handler has finished with, successfully.
type outcome struct {
	code   int
	status string // queued, duplicate or ignored
	reason string
	job    string
}

// handle runs one delivery through the steps of the package comment. It
// returns the outcome to answer with, or an error that statusOf maps. rec
// collects what the log line reports.
func (h *Handler) handle(w http.ResponseWriter, r *http.Request, rec *record) (outcome, error) {
	sig, err := signatureHeader(r.Header)
	if err != nil {
		return outcome{}, err
	}
	body, release, err := h.readBody(w, r)
	defer release()
	if err != nil {
		return outcome{}, err
	}
	if err := verifySignature(h.cfg.Secrets, sig, body); err != nil {
		return outcome{}, err
	}
	d, err := deliveryOf(r.Header)
	if err != nil {
		return outcome{}, err
	}
	payload, err := jsonPayload(r.Header.Get("Content-Type"), body)
	if err != nil {
		return outcome{}, err
	}
	ev, err := h.decode(d.Event, payload)
	if reason, ok := errors.AsType[*ignoredError](err); ok {
		return outcome{code: http.StatusOK, status: "ignored", reason: reason.reason}, nil
	}
	if err != nil {
		return outcome{}, err
	}
	rec.event = &ev
	return h.accept(r.Context(), d, ev)
}

// deliveryOf reads the delivery's identity from its headers.
func deliveryOf(h http.Header) (Delivery, error) {
	d := Delivery{ID: h.Get(headerDelivery), Event: h.Get(headerEvent), HookID: h.Get(headerHookID)}
	switch {
	case d.Event == "":
		return d, badRequest("missing "+headerEvent+" header", nil)
	case d.ID == "":
		return d, badRequest("missing "+headerDelivery+" header", nil)
	}
	return d, nil
}

// accept hands ev to the sink on a context detached from the request: once
// the sink has begun its transaction, a sender hanging up must not abort it
// halfway; the sink still gets a deadline.
func (h *Handler) accept(ctx context.Context, d Delivery, ev Event) (outcome, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.cfg.AcceptTimeout)
	defer cancel()
	res, err := h.sink.Accept(ctx, d, ev)
	if err != nil {
		return outcome{}, unavailable(fmt.Errorf("accepting %s delivery %s: %w", d.Event, d.ID, err))
	}
	if res.Duplicate {
		return outcome{code: http.StatusOK, status: "duplicate", reason: "duplicate delivery", job: res.Job}, nil
	}
	return outcome{code: http.StatusAccepted, status: "queued", job: res.Job}, nil
}
