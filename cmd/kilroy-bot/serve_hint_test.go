package main

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/ghapp"
	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
)

// TestPermissionHints: at start, an installation that does not grant the
// Merge queues permission gets one line saying so; one that grants it
// gets none. The installations come from the fake's GET
// /app/installations, paged.
func TestPermissionHints(t *testing.T) {
	for _, tc := range []struct {
		name  string
		perms map[string]string
		lines int
	}{
		{"granted", map[string]string{"checks": "write", "contents": "write", "merge_queues": "read", "metadata": "read"}, 0},
		{"lacking", map[string]string{"checks": "write", "contents": "write", "metadata": "read"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gh := ghapptest.New(t, ghapptest.WithInstallationPermissions(tc.perms))
			gh.AddRepo("octo", "widgets")
			app, err := ghapp.NewApp(ghapp.Options{AppID: gh.AppID(), PrivateKeyPEM: gh.PrivateKeyPEM(), BaseURL: gh.APIURL()})
			if err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			permissionHints(app, slog.New(slog.NewTextHandler(&logs, nil)))(t.Context())
			if strings.Contains(logs.String(), "could not list") {
				t.Fatalf("listing the installations failed:\n%s", logs.String())
			}
			got := strings.Count(logs.String(), "lacks the Merge queues permission")
			if got != tc.lines || (got > 0 && !strings.Contains(logs.String(), fmt.Sprintf("installation=%d account=octo", gh.InstallationID("octo")))) {
				t.Errorf("%d hint lines, want %d naming installation %d of octo:\n%s", got, tc.lines, gh.InstallationID("octo"), logs.String())
			}
		})
	}
}
