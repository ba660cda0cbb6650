package appsetup

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/ghapp"
)

// httpError is a handler's failure with the status to answer.
type httpError struct {
	status int
	err    error
}

func (e *httpError) Error() string { return e.err.Error() }
func (e *httpError) Unwrap() error { return e.err }

// Handler serves the setup page at / and GitHub's redirect at /callback,
// to requests for the flow's own host only. The page listens on loopback,
// but a web page the same browser has open can point a name of its own at
// 127.0.0.1 (DNS rebinding) and read what answers there: the form with the
// flow's state. Its requests carry its own name in Host, so they get 421.
func (f *Flow) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /{$}", handle(f.page))
	mux.Handle("GET /callback", handle(f.callback))
	hosts := f.hosts()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !slices.Contains(hosts, strings.ToLower(r.Host)) {
			render(w, http.StatusMisdirectedRequest, errorPage,
				fmt.Sprintf("this setup page answers only at %s, not at %q", f.base, r.Host))
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// hosts are the Host values the flow answers: its base's, and localhost
// with the same port.
func (f *Flow) hosts() []string {
	u, err := url.Parse(f.base)
	if err != nil {
		return nil
	}
	out := []string{strings.ToLower(u.Host)}
	if port := u.Port(); port != "" {
		out = append(out, "localhost:"+port)
	}
	return out
}

// handle adapts a handler that returns an error: the error page, with the
// status the error carries (500 when it carries none), is answered here.
func handle(h func(http.ResponseWriter, *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := h(w, r)
		if err == nil {
			return
		}
		status := http.StatusInternalServerError
		var he *httpError
		if errors.As(err, &he) {
			status = he.status
		}
		render(w, status, errorPage, err.Error())
	})
}

// page is the form that posts the manifest to GitHub.
func (f *Flow) page(w http.ResponseWriter, r *http.Request) error {
	m, err := json.Marshal(f.manifest)
	if err != nil {
		return fmt.Errorf("encode manifest: %w", err)
	}
	render(w, http.StatusOK, formPage, map[string]any{
		"Action": f.NewAppURL(), "Manifest": string(m), "Org": f.cfg.Org, "Name": f.cfg.Name,
		"Hook": f.manifest.HookAttributes.URL, "Perms": f.manifest.DefaultPermissions,
		"Why": permissionWhy(), "Events": f.manifest.DefaultEvents,
	})
	return nil
}

// callback is GitHub's redirect after the App was made: it trades the code
// for the credentials and stores them. It works once; Done then fires.
func (f *Flow) callback(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(f.state)) != 1 {
		return &httpError{http.StatusBadRequest, errState}
	}
	creds, err := ghapp.ConvertManifest(r.Context(), f.cfg.HTTPClient, f.cfg.APIURL, q.Get("code"))
	if err != nil {
		return &httpError{http.StatusBadGateway, err}
	}
	if err := f.cfg.Files.Store(creds); err != nil {
		return fmt.Errorf("the App %s (id %d) was registered but its credentials could not be stored, "+
			"so delete it on GitHub and run setup again: %w", creds.Slug, creds.ID, err)
	}
	res := Result{AppID: creds.ID, Slug: creds.Slug, InstallURL: creds.InstallURL()}
	f.once.Do(func() { f.done <- res })
	render(w, http.StatusOK, donePage, map[string]any{"Result": res, "Dir": f.cfg.Files.Dir})
	return nil
}

func render(w http.ResponseWriter, status int, t *template.Template, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	t.Execute(w, data) // a write error is the browser gone; nothing to tell it
}
