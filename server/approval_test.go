package server

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
	"github.com/kilroy-bot/kilroy-bot/queue"
)

func TestApprove(t *testing.T) {
	t0 := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	sec := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }
	// aaa pushed at 0s, bbb at 10s, aaa pushed back at 20s.
	heads := []queue.SeenHead{{SHA: "bbb", SeenAt: sec(10)}, {SHA: "aaa", SeenAt: sec(20)}}
	// Two commits with the same seven-digit prefix, seen at 10s and 20s.
	benign, malicious := "abc1234"+strings.Repeat("0", 33), "abc1234"+strings.Repeat("1", 33)
	same := []queue.SeenHead{{SHA: benign, SeenAt: sec(10)}, {SHA: malicious, SeenAt: sec(20)}, {SHA: benign, SeenAt: sec(10)}}
	tests := []struct {
		name      string
		sha, head string
		untrusted bool
		commented time.Time
		heads     []queue.SeenHead
		want      approval
	}{
		{name: "trusted: the head as it is", head: "ccc", commented: sec(5), heads: heads, want: approval{ok: true}},
		{name: "head unchanged since the comment", head: "bbb", untrusted: true, commented: sec(15), heads: heads[:1],
			want: approval{ok: true, atComment: "bbb"}},
		{name: "pushed after the comment", head: "aaa", untrusted: true, commented: sec(15), heads: heads,
			want: approval{atComment: "bbb"}},
		{name: "heard of within the comment's second", head: "bbb", untrusted: true, commented: sec(10).Add(-time.Millisecond),
			heads: heads[:1]},
		{name: "heard of at the comment's time", head: "bbb", untrusted: true, commented: sec(10), heads: heads[:1],
			want: approval{ok: true, atComment: "bbb"}},
		{name: "push not heard of yet", head: "ccc", untrusted: true, commented: sec(25), heads: heads,
			want: approval{atComment: "aaa"}},
		{name: "no head heard of before the comment", head: "bbb", untrusted: true, commented: sec(5), heads: heads},
		{name: "comment time unknown", head: "aaa", untrusted: true, heads: heads},
		{name: "full SHA of the head", sha: malicious, head: malicious, untrusted: true, commented: sec(5),
			want: approval{ok: true, named: malicious}},
		{name: "full SHA not the head", sha: benign, head: malicious, untrusted: true, commented: sec(30), heads: same,
			want: approval{named: benign}},
		{name: "prefix of the head heard of before the comment", sha: benign[:7], head: benign, untrusted: true, commented: sec(15),
			heads: same[:1], want: approval{ok: true, named: benign}},
		{name: "prefix shared by a push after the comment", sha: benign[:7], head: malicious, untrusted: true, commented: sec(15),
			heads: same, want: approval{named: benign}},
		{name: "prefix of a trusted pull request", sha: benign[:7], head: malicious, commented: sec(15), heads: same,
			want: approval{named: benign}},
		{name: "prefix of two heads before the comment", sha: benign[:7], head: malicious, untrusted: true, commented: sec(25),
			heads: same, want: approval{matches: []string{benign, malicious}}},
		{name: "prefix of no head before the comment", sha: benign[:7], head: benign, untrusted: true, commented: sec(5),
			heads: same},
		{name: "prefix with the comment time unknown", sha: benign[:7], head: benign, untrusted: true, heads: same},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := approve(tt.sha, tt.head, tt.untrusted, tt.commented, tt.heads)
			if diff := cmp.Diff(got, tt.want, cmp.AllowUnexported(approval{})); diff != "" {
				t.Errorf("approve (-got +want):\n%s", diff)
			}
		})
	}
}

// TestServerForkApprovalRace: a writer's `/kilroy run` on a fork pull
// request runs the head that was current when the comment was written. A
// push between the comment and its handling runs nothing: the reply names
// both commits; `/kilroy run SHA` then runs exactly that commit, and an
// older SHA is refused.
func TestServerForkApprovalRace(t *testing.T) {
	e := newServerEnv(t)
	e.seed(map[string]string{".kilroy/ci.dot": ciPipeline})
	e.gh.SetPermission("octo", "widgets", "maint", "write")
	fork := e.gh.AddRepo("forker", "widgets")
	seen := fork.Commit(t, "main", map[string]string{"main.go": "package main\n"}, "reviewed change")
	pull := ghapptest.Pull{Number: 2, HeadSHA: seen, Author: "forker", HeadRepo: "forker/widgets", Files: []string{"main.go"}}
	e.gh.PutPull("octo", "widgets", pull)
	e.handle(e.prEvent("opened", pull))

	approval := e.commentEvent(2, "maint", Command{Verb: VerbRun})
	// The push lands after the comment was written, before it is handled.
	pushed := fork.Commit(t, "main", map[string]string{"main.go": "package main // changed after review\n"}, "late push")
	pull.HeadSHA = pushed
	e.gh.PutPull("octo", "widgets", pull)
	e.handle(approval) // before the push's delivery
	e.handle(e.prEvent("synchronize", pull))
	e.handle(approval) // after it
	for i, c := range e.botComments() {
		if !strings.Contains(c, "Nothing ran") || !strings.Contains(c, seen) || !strings.Contains(c, pushed) {
			t.Errorf("reply %d = %q, want nothing ran, naming %s and %s", i, c, seen, pushed)
		}
	}
	if n := len(e.botComments()); n != 2 {
		t.Errorf("%d replies, want 2", n)
	}
	if got := e.reps.queuedRuns("ci"); len(got) != 0 {
		t.Fatalf("the late push was run on the earlier approval: %+v", got)
	}

	e.handle(e.commentEvent(2, "maint", Command{Verb: VerbRun, SHA: seen[:7]}))
	if got := e.botComments(); len(got) != 3 || !strings.Contains(got[2], "not the head") {
		t.Fatalf("replies = %q, want a third saying %s is not the head", got, seen[:7])
	}
	e.handle(e.commentEvent(2, "maint", Command{Verb: VerbRun, SHA: pushed}))
	run := e.newRun("ci", 0)
	if run.HeadSHA != pushed {
		t.Fatalf("run of /kilroy run %s: head %s", pushed, run.HeadSHA)
	}
	e.reps.waitEnd(t, run.RunID)
	e.waitRevoked()
}
