package main

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/ghapp"
	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
	"github.com/kilroy-bot/kilroy-bot/ghserver"
	appserver "github.com/kilroy-bot/kilroy-bot/server"
)

// TestServeWiresGhserver holds serve to the one GitHub adapter: the
// GitHub of an installation and the check reporter of a run that serve's
// wiring makes are ghserver's types, the ones bench/runs drives
// (TestReplicaRunsServeAdapter), so a copy of the adapter in either place
// fails one of the two.
func TestServeWiresGhserver(t *testing.T) {
	ctx := context.Background()
	gh := ghapptest.New(t)
	gh.AddRepo("acme", "api")
	app, err := ghapp.NewApp(ghapp.Options{AppID: gh.AppID(), PrivateKeyPEM: gh.PrivateKeyPEM(),
		BaseURL: gh.APIURL(), HTTPClient: gh.Client()})
	if err != nil {
		t.Fatal(err)
	}
	cfg := serveConfig{DataDir: t.TempDir()}
	w := wired{Config: cfg, App: app, Redactor: ghserver.NewRedactor(cfg.DataDir), Logger: slog.New(slog.DiscardHandler)}
	if _, err := newRegistry(&w); err != nil {
		t.Fatal(err)
	}
	adapter, err := githubAdapter(w, webURL(gh.APIURL()))
	if err != nil {
		t.Fatal(err)
	}
	id := gh.InstallationID("acme")
	api, err := adapter.GitHub(ctx, id)
	rep, rerr := adapter.NewReporter(ctx, appserver.ReportTarget{InstallationID: id, Repo: "acme/api",
		Pipeline: "ci", RunID: "run-1", HeadSHA: "0123456789012345678901234567890123456789"})
	if err := errors.Join(err, rerr); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		got  any
		want reflect.Type
	}{{api, reflect.TypeFor[*ghserver.GitHub]()}, {rep, reflect.TypeFor[*ghserver.Reporter]()}} {
		if got := reflect.TypeOf(c.got); got != c.want {
			t.Errorf("serve wires a %v, want %v", got, c.want)
		}
	}
}
