package main

import (
	"context"
	"net/http"
	"net/url"

	"github.com/kilroy-bot/kilroy-bot/runpage"
)

// The live run page: the event stream of /runs/{id}/live and the script
// that reads it (runpage/live.go).

// runStream serves /runs/{id}/live?t=TOKEN, the run page's event stream,
// with the page's own token rule. Streams end when the server shuts down
// (streamsDone), so that they never hold the drain up.
func (s *server) runStream(w http.ResponseWriter, r *http.Request) error {
	token := r.URL.Query().Get(runpage.TokenParam)
	if token == "" {
		return errNoRunToken
	}
	id := r.PathValue("id")
	if _, err := s.deps.Pages.Open(id, token); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(s.streamsCtx(), cancel)
	defer stop()
	return s.deps.Pages.Stream(ctx, w, id, runpage.StreamSince(r), 0)
}

// liveScript serves the run page's script.
func (s *server) liveScript(w http.ResponseWriter, _ *http.Request) error {
	h := w.Header()
	h.Set("Content-Type", "text/javascript; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "public, max-age=300")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(runpage.LiveScript())
	return nil
}

// liveURL is the event stream of run id's page with its token.
func liveURL(id, token string) string {
	return runpage.StreamPath(id) + "?" + runpage.TokenParam + "=" + url.QueryEscape(token)
}

// streamsCtx ends when the server starts shutting down.
func (s *server) streamsCtx() context.Context {
	s.streamsOnce.Do(func() {
		s.streams, s.endStreams = context.WithCancel(context.Background())
	})
	return s.streams
}

// stopStreams ends every event stream; http.Server calls it at Shutdown.
func (s *server) stopStreams() {
	s.streamsCtx()
	s.endStreams()
}
