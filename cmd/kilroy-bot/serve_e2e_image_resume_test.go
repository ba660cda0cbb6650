//go:build unix

package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/queue/pgtest"
	"github.com/kilroy-bot/kilroy-bot/runner/image/imagetest"
)

// A served run pins its image's digest: serve, a process of its own, is
// killed with SIGKILL while the run waits in its second node; the tag is
// moved to another image meanwhile; the serve that takes the run over (a
// replica on the shared database, which never saw the run's directory)
// resumes it in the pinned image, not the tag's new one, and the summary
// names the pinned digest.
func TestServeE2EImageResumeAfterKill(t *testing.T) {
	needSandbox(t)
	pg := pgtest.Start(t)
	reg := imagetest.Registry(t)
	ref := reg + "/team/tools:1"
	pinned := markerImage(t, ref, "PINNED-IMAGE")
	gate := newGate(t)
	e := newE2E(t, e2eOptions{policy: "images:\n  allow: [\"" + reg + "/team/**\"]\n",
		files:       map[string]string{".kilroy/ci.dot": markerDOT(gate), ".kilroy/config.yml": "version: 1\nimage: " + ref + "\n"},
		databaseURL: pg, staleAfter: 2 * time.Second, deferStart: true})
	a, sha, id := runOnReplica(t, e, pg, 32, "first", "wait")
	branch := "kilroy/run/ci/" + id
	a.kill(t)
	if moved := markerImage(t, ref, "MOVED-TAG"); moved == pinned {
		t.Fatal("the moved tag names the pinned image")
	}
	touch(t, gate)
	e.start()
	runs := e.waitSettled(sha, "kilroy/ci")
	e.waitFor("no run queued or running", func() bool {
		code, metrics := e.get("/metrics")
		return code == http.StatusOK && strings.Contains(metrics, "\nkilroy_queue_depth 0\n")
	})
	sum := runs[len(runs)-1]
	if sum.Conclusion != "success" || runID(sum) != id {
		t.Fatalf("kilroy/ci of run %s: %s, want success of run %s\n%s\nthe first serve's log:\n%s", runID(sum), sum.Conclusion, id, sum.Summary, a.out.String())
	}
	if got := e.repo.Git(t, "show", branch+":seen.txt"); got != "PINNED-IMAGE\nPINNED-IMAGE" {
		t.Errorf("the run's nodes saw:\n%s\nwant the pinned image's marker before and after the kill", got)
	}
	if note := "image `" + ref + "` @ `" + pinned + "`"; !strings.Contains(sum.Summary, note) {
		t.Errorf("the resumed run's summary does not say %s:\n%s", note, sum.Summary)
	}
}
