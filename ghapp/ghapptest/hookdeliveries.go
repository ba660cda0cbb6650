package ghapptest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// HookDelivery is one attempt at delivering a webhook, as GitHub lists it
// under GET /app/hook/deliveries: each redelivery is an attempt of its own
// with the same GUID.
type HookDelivery struct {
	ID          int64
	GUID        string // X-GitHub-Delivery
	Event       string
	Action      string // the payload's "action", if any
	StatusCode  int    // the bot's answer; 0 when it could not be reached
	Redelivery  bool
	DeliveredAt time.Time
	Body        []byte // the payload, which a redelivery sends again
}

// webhookTarget is where the App's hook delivers.
type webhookTarget struct {
	url    string
	secret []byte
}

// SetWebhook sets the App's webhook URL and secret, where Deliver and
// redeliveries send. Call it again when the bot moves (a restart on
// another port).
func (s *Server) SetWebhook(url string, secret []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.hook = webhookTarget{url: url, secret: bytes.Clone(secret)}
}

// Deliver sends body to the App's webhook as GitHub does (signed, with
// the delivery headers) and records the attempt with the bot's status
// code, 0 when the bot could not be reached. It returns that status.
func (s *Server) Deliver(event, guid string, body []byte) int {
	s.t.Helper()
	code := s.send(event, guid, body)
	s.RecordDelivery(HookDelivery{GUID: guid, Event: event, StatusCode: code, Body: body})
	return code
}

// RecordDelivery registers an attempt without sending anything, as if
// GitHub had made it and the bot had answered d.StatusCode (say a 503, or
// 0 for a bot that was down). DeliveredAt defaults to now, Action to the
// payload's. It returns the attempt's id.
func (s *Server) RecordDelivery(d HookDelivery) int64 {
	if d.DeliveredAt.IsZero() {
		d.DeliveredAt = time.Now().UTC()
	}
	if d.Action == "" {
		var p struct{ Action string }
		if json.Unmarshal(d.Body, &p) == nil {
			d.Action = p.Action
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d.ID = s.nextIDLocked()
	s.st.deliveries = append(s.st.deliveries, d)
	return d.ID
}

// HookDeliveries returns every attempt recorded, oldest first.
func (s *Server) HookDeliveries() []HookDelivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.st.deliveries)
}

// send POSTs one signed delivery to the webhook and returns the status,
// 0 when there is no webhook or the bot cannot be reached. It holds no lock:
// the bot calls the fake while it answers.
func (s *Server) send(event, guid string, body []byte) int {
	s.mu.Lock()
	hook := s.st.hook
	s.mu.Unlock()
	if hook.url == "" {
		return 0
	}
	req := Hook{Secret: hook.secret, AppID: s.cfg.appID}.Request(s.t, hook.url, event, guid, body)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	return resp.StatusCode
}

// listHookDeliveries serves GET /app/hook/deliveries (App JWT): newest
// first, per_page (default 30, at most 100), and a Link header whose
// rel="next" carries the cursor of the next page, as GitHub pages it.
func (s *Server) listHookDeliveries(w http.ResponseWriter, r *http.Request) error {
	if err := s.requireJWT(r); err != nil {
		return err
	}
	perPage := min(max(intParam(r, "per_page", 30), 1), 100)
	s.mu.Lock()
	all := slices.Clone(s.st.deliveries)
	s.mu.Unlock()
	slices.Reverse(all)
	start := 0
	if c := r.URL.Query().Get("cursor"); c != "" {
		id, err := strconv.ParseInt(strings.TrimPrefix(c, "v1_"), 10, 64)
		if err != nil {
			return errInvalid("invalid cursor")
		}
		start = slices.IndexFunc(all, func(d HookDelivery) bool { return d.ID <= id })
		if start < 0 {
			start = len(all)
		}
	}
	page := all[start:min(start+perPage, len(all))]
	if end := start + len(page); end < len(all) {
		q := url.Values{"per_page": {strconv.Itoa(perPage)}, "cursor": {fmt.Sprintf("v1_%d", all[end].ID)}}
		w.Header().Set("Link", fmt.Sprintf(`<%s%s%s?%s>; rel="next"`, s.URL(), apiPrefix, r.URL.Path, q.Encode()))
	}
	out := make([]map[string]any, 0, len(page))
	for _, d := range page {
		out = append(out, deliveryJSON(d))
	}
	return writeJSON(w, http.StatusOK, out)
}

func deliveryJSON(d HookDelivery) map[string]any {
	status := "OK"
	switch {
	case d.StatusCode == 0:
		status = "Failed to connect to host"
	case d.StatusCode >= 400:
		status = "Invalid HTTP Response: " + strconv.Itoa(d.StatusCode)
	}
	var action any
	if d.Action != "" {
		action = d.Action
	}
	return map[string]any{
		"id": d.ID, "guid": d.GUID, "delivered_at": d.DeliveredAt.Format(time.RFC3339),
		"redelivery": d.Redelivery, "duration": 0.05, "status": status, "status_code": d.StatusCode,
		"event": d.Event, "action": action, "installation_id": nil, "repository_id": nil,
		"throttled_at": nil,
	}
}

// redeliver serves POST /app/hook/deliveries/{id}/attempts (App JWT): it
// sends the delivery again to the webhook, under the same GUID and marked
// as a redelivery, records the attempt and answers 202. (GitHub sends a
// moment later; the fake sends before it answers, so a test sees the
// attempt as soon as the bot's call returns.)
func (s *Server) redeliver(w http.ResponseWriter, r *http.Request) error {
	if err := s.requireJWT(r); err != nil {
		return err
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return errNotFound()
	}
	s.mu.Lock()
	i := slices.IndexFunc(s.st.deliveries, func(d HookDelivery) bool { return d.ID == id })
	var d HookDelivery
	if i >= 0 {
		d = s.st.deliveries[i]
	}
	s.mu.Unlock()
	if i < 0 {
		return errNotFound()
	}
	d.StatusCode = s.send(d.Event, d.GUID, d.Body)
	d.Redelivery, d.DeliveredAt = true, time.Time{}
	s.RecordDelivery(d)
	return writeJSON(w, http.StatusAccepted, map[string]any{})
}
